package status

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// Container statuses as the kubelet's getPhase tests build them
// (pkg/kubelet/kubelet_pods_test.go, v1.37.2).
func sRunning(name string) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}
}

func sStarted(name string) v1.ContainerStatus {
	s, started := sRunning(name), true
	s.Started = &started
	return s
}

func sExited(name string, code int32) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code}}}
}

func sWaiting(name string) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{}}}
}

func sBackOff(name string, lastCode int32) v1.ContainerStatus {
	s := sWaiting(name)
	s.LastTerminationState.Terminated = &v1.ContainerStateTerminated{ExitCode: lastCode}
	return s
}

func sidecarSpec(policy v1.RestartPolicy) *v1.Pod {
	always := v1.ContainerRestartPolicyAlways
	return &v1.Pod{Spec: v1.PodSpec{
		RestartPolicy:  policy,
		InitContainers: []v1.Container{{Name: "containerX", RestartPolicy: &always}},
		Containers:     []v1.Container{{Name: "containerA"}, {Name: "containerB"}},
	}}
}

// TestPhaseWithSidecars ports the kubelet's
// TestPodPhaseWithRestart{Always,Never}RestartableInitContainers.
func TestPhaseWithSidecars(t *testing.T) {
	type tc struct {
		name                 string
		init, regular        []v1.ContainerStatus
		terminal, hasStarted bool
		want                 v1.PodPhase
	}
	always := []tc{
		{name: "empty, waiting", want: v1.PodPending},
		{name: "sidecar running", init: []v1.ContainerStatus{sRunning("containerX")}, want: v1.PodPending},
		{name: "sidecar stopped", init: []v1.ContainerStatus{sExited("containerX", 0)}, want: v1.PodPending},
		{name: "sidecar waiting, terminated zero", init: []v1.ContainerStatus{sBackOff("containerX", 0)}, want: v1.PodPending},
		{name: "sidecar waiting, terminated non-zero", init: []v1.ContainerStatus{sBackOff("containerX", -1)}, want: v1.PodPending},
		{name: "sidecar waiting, not terminated", init: []v1.ContainerStatus{sWaiting("containerX")}, want: v1.PodPending},
		{name: "sidecar started, 1/2 regular running", init: []v1.ContainerStatus{sStarted("containerX")},
			regular: []v1.ContainerStatus{sRunning("containerA")}, hasStarted: true, want: v1.PodPending},
		{name: "sidecar started, all regular running", init: []v1.ContainerStatus{sStarted("containerX")},
			regular: []v1.ContainerStatus{sRunning("containerA"), sRunning("containerB")}, hasStarted: true, want: v1.PodRunning},
		{name: "sidecar running, all regular running", init: []v1.ContainerStatus{sRunning("containerX")},
			regular: []v1.ContainerStatus{sRunning("containerA"), sRunning("containerB")}, hasStarted: true, want: v1.PodRunning},
		{name: "sidecar stopped, all regular running", init: []v1.ContainerStatus{sExited("containerX", 0)},
			regular: []v1.ContainerStatus{sRunning("containerA"), sRunning("containerB")}, hasStarted: true, want: v1.PodRunning},
		{name: "sidecar crash-looping, all regular running", init: []v1.ContainerStatus{sBackOff("containerX", 0)},
			regular: []v1.ContainerStatus{sRunning("containerA"), sRunning("containerB")}, hasStarted: true, want: v1.PodRunning},
		{name: "regular succeeded, sidecar failed, terminal", init: []v1.ContainerStatus{sExited("containerX", -1)},
			regular: []v1.ContainerStatus{sExited("containerA", 0), sExited("containerB", 0)}, terminal: true, hasStarted: true, want: v1.PodSucceeded},
		{name: "regular succeeded, sidecar succeeded, terminal", init: []v1.ContainerStatus{sExited("containerX", 0)},
			regular: []v1.ContainerStatus{sExited("containerA", 0), sExited("containerB", 0)}, terminal: true, hasStarted: true, want: v1.PodSucceeded},
		{name: "re-initializing after a new sandbox", init: []v1.ContainerStatus{sRunning("containerX")},
			regular: []v1.ContainerStatus{sRunning("containerA"), sRunning("containerB")}, want: v1.PodPending},
	}
	never := []tc{
		{name: "empty, waiting", want: v1.PodPending},
		{name: "sidecar running", init: []v1.ContainerStatus{sRunning("containerX")}, want: v1.PodPending},
		{name: "sidecar stopped", init: []v1.ContainerStatus{sExited("containerX", 0)}, want: v1.PodPending},
		{name: "sidecar waiting, not terminated", init: []v1.ContainerStatus{sWaiting("containerX")}, want: v1.PodPending},
		{name: "sidecar started, one regular running", init: []v1.ContainerStatus{sStarted("containerX")},
			regular: []v1.ContainerStatus{sRunning("containerA")}, hasStarted: true, want: v1.PodPending},
		{name: "sidecar started, regular succeeded", init: []v1.ContainerStatus{sStarted("containerX")},
			regular: []v1.ContainerStatus{sExited("containerA", 0), sExited("containerB", 0)}, hasStarted: true, want: v1.PodRunning},
		{name: "all succeeded", init: []v1.ContainerStatus{sExited("containerX", 0)},
			regular: []v1.ContainerStatus{sExited("containerA", 0), sExited("containerB", 0)}, hasStarted: true, want: v1.PodSucceeded},
		{name: "sidecar failed, regular succeeded", init: []v1.ContainerStatus{sExited("containerX", -1)},
			regular: []v1.ContainerStatus{sExited("containerA", 0), sExited("containerB", 0)}, hasStarted: true, want: v1.PodSucceeded},
		{name: "sidecar crash-looping, regular succeeded", init: []v1.ContainerStatus{sBackOff("containerX", -1)},
			regular: []v1.ContainerStatus{sExited("containerA", 0), sExited("containerB", 0)}, hasStarted: true, want: v1.PodSucceeded},
		{name: "a regular container failed", init: []v1.ContainerStatus{sExited("containerX", 143)},
			regular: []v1.ContainerStatus{sExited("containerA", 0), sExited("containerB", 1)}, hasStarted: true, want: v1.PodFailed},
	}
	for policy, cases := range map[v1.RestartPolicy][]tc{v1.RestartPolicyAlways: always, v1.RestartPolicyNever: never} {
		for _, c := range cases {
			got := phase(sidecarSpec(policy), c.regular, c.init, c.terminal, c.hasStarted)
			if got != c.want {
				t.Errorf("%s / %s: phase %s, want %s", policy, c.name, got, c.want)
			}
		}
	}
}

// TestPhaseWithRegularInitContainers: a failed init container ends the pod
// only when it may not run again, by the pod's policy or its own.
func TestPhaseWithRegularInitContainers(t *testing.T) {
	pod := func(policy v1.RestartPolicy) *v1.Pod {
		return &v1.Pod{Spec: v1.PodSpec{RestartPolicy: policy,
			InitContainers: []v1.Container{{Name: "init1"}, {Name: "init2"}}, Containers: []v1.Container{{Name: "run"}}}}
	}
	never, always := v1.RestartPolicyNever, v1.RestartPolicyAlways
	cases := []struct {
		name string
		pod  *v1.Pod
		init []v1.ContainerStatus
		want v1.PodPhase
	}{
		{"first running", pod(always), []v1.ContainerStatus{sRunning("init1"), sWaiting("init2")}, v1.PodPending},
		{"first failed, retried", pod(always), []v1.ContainerStatus{sBackOff("init1", 1), sWaiting("init2")}, v1.PodPending},
		{"second failed under never", pod(never), []v1.ContainerStatus{sExited("init1", 0), sExited("init2", 1)}, v1.PodFailed},
		{"second failed, own policy restarts", func() *v1.Pod {
			p, onFailure := pod(never), v1.ContainerRestartPolicyOnFailure
			p.Spec.InitContainers[1].RestartPolicy = &onFailure
			return p
		}(), []v1.ContainerStatus{sExited("init1", 0), sBackOff("init2", 1)}, v1.PodPending},
	}
	for _, c := range cases {
		if got := phase(c.pod, []v1.ContainerStatus{sWaiting("run")}, c.init, false, false); got != c.want {
			t.Errorf("%s: phase %s, want %s", c.name, got, c.want)
		}
	}
}
