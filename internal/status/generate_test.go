package status

import (
	"testing"
	"time"

	"github.com/runlet/runlet/internal/podtest"
	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
)

var (
	tStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tEnd   = tStart.Add(time.Minute)
)

func testPod(policy v1.RestartPolicy, names ...string) *v1.Pod {
	p := podtest.New("p", podtest.Namespace("ns"), podtest.UID("uid"), podtest.RestartPolicy(policy))
	for _, n := range names {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: n, Image: "img:" + n})
	}
	return p
}

func running(id, name string, attempt int) runtime.Container {
	return runtime.Container{ID: id, Name: name, Attempt: attempt, State: runtime.ContainerRunning,
		ImageID: "sha256:x", StartedAt: tStart, CreatedAt: tStart.Add(time.Duration(attempt))}
}

func exited(id, name string, attempt, code int) runtime.Container {
	c := running(id, name, attempt)
	c.State, c.ExitCode, c.FinishedAt = runtime.ContainerExited, code, tEnd
	return c
}

func podStatus(cs ...runtime.Container) *runtime.PodStatus {
	ps := &runtime.PodStatus{UID: "uid", Containers: cs, Sandboxes: []runtime.Sandbox{
		{ID: "sb", State: runtime.SandboxReady, IPs: []string{"10.88.0.5", "fd00::5"}}}}
	ps.SortNewestFirst()
	return ps
}

func condStatus(st v1.PodStatus, typ v1.PodConditionType) v1.ConditionStatus {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return "missing"
}

func TestGeneratePhase(t *testing.T) {
	never, onFailure, always := v1.RestartPolicyNever, v1.RestartPolicyOnFailure, v1.RestartPolicyAlways
	cases := []struct {
		name     string
		pod      *v1.Pod
		ps       *runtime.PodStatus
		waiting  map[string]Waiting
		terminal bool
		want     v1.PodPhase
		check    func(t *testing.T, cs v1.ContainerStatus)
	}{
		{name: "running", pod: testPod(always, "c"), ps: podStatus(running("id1", "c", 0)), want: v1.PodRunning,
			check: func(t *testing.T, cs v1.ContainerStatus) {
				if !cs.Ready || cs.Started == nil || !*cs.Started || cs.State.Running == nil ||
					!cs.State.Running.StartedAt.Time.Equal(tStart) || cs.ContainerID != "podman://id1" ||
					cs.ImageID != "sha256:x" || cs.Image != "img:c" {
					t.Errorf("status = %+v", cs)
				}
			}},
		{name: "created", pod: testPod(always, "c"), ps: podStatus(runtime.Container{ID: "id1", Name: "c", State: runtime.ContainerCreated}),
			want: v1.PodPending, check: waitingReason("ContainerCreating")},
		{name: "no container yet", pod: testPod(always, "c"), ps: podStatus(), want: v1.PodPending, check: waitingReason("ContainerCreating")},
		{name: "exited 0 never", pod: testPod(never, "c"), ps: podStatus(exited("id1", "c", 0, 0)), want: v1.PodSucceeded,
			check: terminatedWith(0, "Completed")},
		{name: "exited 3 never", pod: testPod(never, "c"), ps: podStatus(exited("id1", "c", 0, 3)), want: v1.PodFailed,
			check: terminatedWith(3, "Error")},
		{name: "one of two exited never", pod: testPod(never, "a", "b"),
			ps: podStatus(exited("id1", "a", 0, 0), running("id2", "b", 0)), want: v1.PodRunning},
		{name: "onfailure exited 0", pod: testPod(onFailure, "c"), ps: podStatus(exited("id1", "c", 0, 0)), want: v1.PodSucceeded},
		{name: "onfailure exited 1 restarts", pod: testPod(onFailure, "c"), ps: podStatus(exited("id1", "c", 0, 1)), want: v1.PodRunning},
		{name: "onfailure exited 1 terminal", pod: testPod(onFailure, "c"), ps: podStatus(exited("id1", "c", 0, 1)),
			terminal: true, want: v1.PodFailed},
		{name: "always exited 0 terminal", pod: testPod(always, "c"), ps: podStatus(exited("id1", "c", 0, 0)),
			terminal: true, want: v1.PodSucceeded},
		{name: "crashloop", pod: testPod(always, "c"), ps: podStatus(exited("id1", "c", 0, 1), exited("id2", "c", 1, 2)),
			waiting: map[string]Waiting{"c": {Reason: "CrashLoopBackOff", Message: "back-off 10s"}}, want: v1.PodRunning,
			check: func(t *testing.T, cs v1.ContainerStatus) {
				w, last := cs.State.Waiting, cs.LastTerminationState.Terminated
				if w == nil || w.Reason != "CrashLoopBackOff" || w.Message != "back-off 10s" || cs.State.Terminated != nil {
					t.Errorf("state = %+v; want waiting CrashLoopBackOff", cs.State)
				}
				if last == nil || last.ExitCode != 2 || last.ContainerID != "podman://id2" || cs.RestartCount != 1 || cs.Ready {
					t.Errorf("lastState = %+v restarts %d ready %v; want the newest exit (2), 1 restart", last, cs.RestartCount, cs.Ready)
				}
			}},
		{name: "restarted keeps previous exit", pod: testPod(always, "c"),
			ps: podStatus(exited("id1", "c", 0, 137), running("id2", "c", 1)), want: v1.PodRunning,
			check: func(t *testing.T, cs v1.ContainerStatus) {
				last := cs.LastTerminationState.Terminated
				if cs.State.Running == nil || last == nil || last.ExitCode != 137 || cs.RestartCount != 1 {
					t.Errorf("status = %+v", cs)
				}
			}},
		{name: "image pull", pod: testPod(always, "c"), ps: podStatus(),
			waiting: map[string]Waiting{"c": {Reason: "ErrImagePull", Message: "not found"}}, want: v1.PodPending,
			check: waitingReason("ErrImagePull")},
		// A start that failed (RunContainerError) of a container that will
		// not run again: its end stays, as the kubelet keeps it.
		{name: "start failed never", pod: testPod(never, "c"), ps: func() *runtime.PodStatus {
			c := exited("id1", "c", 0, 128)
			c.Reason, c.Error = runtime.ReasonStartError, "exec: no such file"
			return podStatus(c)
		}(), waiting: map[string]Waiting{"c": {Reason: "RunContainerError", Message: "exec: no such file"}},
			want: v1.PodFailed, check: terminatedWith(128, "StartError")},
		{name: "start failed always", pod: testPod(always, "c"), ps: func() *runtime.PodStatus {
			c := exited("id1", "c", 0, 128)
			c.Reason = runtime.ReasonStartError
			return podStatus(c)
		}(), waiting: map[string]Waiting{"c": {Reason: "RunContainerError"}}, want: v1.PodRunning,
			check: func(t *testing.T, cs v1.ContainerStatus) {
				if last := cs.LastTerminationState.Terminated; cs.State.Waiting == nil || cs.State.Waiting.Reason != "RunContainerError" ||
					last == nil || last.Reason != "StartError" {
					t.Errorf("status = %+v; want waiting RunContainerError after a StartError", cs)
				}
			}},
		{name: "oom", pod: testPod(never, "c"), ps: func() *runtime.PodStatus {
			c := exited("id1", "c", 0, 137)
			c.OOMKilled = true
			return podStatus(c)
		}(), want: v1.PodFailed, check: terminatedWith(137, "OOMKilled")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := Generate(Input{Pod: tc.pod, Runtime: tc.ps, Waiting: tc.waiting, RuntimeName: "podman", Terminal: tc.terminal})
			if st.Phase != tc.want {
				t.Errorf("phase = %s; want %s (statuses %+v)", st.Phase, tc.want, st.ContainerStatuses)
			}
			if len(st.ContainerStatuses) != len(tc.pod.Spec.Containers) {
				t.Fatalf("%d container statuses; want %d", len(st.ContainerStatuses), len(tc.pod.Spec.Containers))
			}
			if tc.check != nil {
				tc.check(t, st.ContainerStatuses[0])
			}
		})
	}
}

func waitingReason(reason string) func(*testing.T, v1.ContainerStatus) {
	return func(t *testing.T, cs v1.ContainerStatus) {
		if cs.State.Waiting == nil || cs.State.Waiting.Reason != reason || cs.Ready {
			t.Errorf("state = %+v; want waiting %s", cs.State, reason)
		}
	}
}

func terminatedWith(code int32, reason string) func(*testing.T, v1.ContainerStatus) {
	return func(t *testing.T, cs v1.ContainerStatus) {
		term := cs.State.Terminated
		if term == nil || term.ExitCode != code || term.Reason != reason || !term.FinishedAt.Time.Equal(tEnd) ||
			term.ContainerID != "podman://id1" || cs.Ready {
			t.Errorf("state = %+v; want terminated %d %s", cs.State, code, reason)
		}
	}
}

// A false PodReadyToStartContainers carries the kubelet's reason and says
// why; a true one says nothing.
func checkSandboxReason(t *testing.T, st v1.PodStatus) {
	t.Helper()
	for _, c := range st.Conditions {
		if c.Type != v1.PodReadyToStartContainers {
			continue
		}
		if (c.Status == v1.ConditionFalse) != (c.Reason == "PodSandboxNotReady" && c.Message != "") {
			t.Errorf("PodReadyToStartContainers %s, reason %q, message %q", c.Status, c.Reason, c.Message)
		}
	}
}

func TestGenerateConditionsAndIPs(t *testing.T) {
	type conds = map[v1.PodConditionType]v1.ConditionStatus
	T, F := v1.ConditionTrue, v1.ConditionFalse
	cases := []struct {
		name string
		pod  *v1.Pod
		ps   *runtime.PodStatus
		want conds
	}{
		{"running", testPod(v1.RestartPolicyAlways, "c"), podStatus(running("id1", "c", 0)),
			conds{v1.PodReady: T, v1.ContainersReady: T, v1.PodInitialized: T, v1.PodScheduled: T, v1.PodReadyToStartContainers: T}},
		{"one not ready", testPod(v1.RestartPolicyAlways, "a", "b"), podStatus(running("id1", "a", 0)),
			conds{v1.PodReady: F, v1.ContainersReady: F, v1.PodInitialized: T, v1.PodScheduled: T, v1.PodReadyToStartContainers: T}},
		{"succeeded", testPod(v1.RestartPolicyNever, "c"), podStatus(exited("id1", "c", 0, 0)),
			conds{v1.PodReady: F, v1.ContainersReady: F, v1.PodInitialized: T, v1.PodScheduled: T, v1.PodReadyToStartContainers: F}},
		{"sandbox not ready", testPod(v1.RestartPolicyAlways, "c"), func() *runtime.PodStatus {
			ps := podStatus(running("id1", "c", 0))
			ps.Sandboxes[0].State = runtime.SandboxNotReady
			return ps
		}(),
			conds{v1.PodReady: T, v1.ContainersReady: T, v1.PodInitialized: T, v1.PodScheduled: T, v1.PodReadyToStartContainers: F}},
		{"no sandbox", testPod(v1.RestartPolicyAlways, "c"), &runtime.PodStatus{},
			conds{v1.PodReady: F, v1.ContainersReady: F, v1.PodInitialized: T, v1.PodScheduled: T, v1.PodReadyToStartContainers: F}},
		{"init running", func() *v1.Pod {
			p := testPod(v1.RestartPolicyAlways, "c")
			p.Spec.InitContainers = []v1.Container{{Name: "init"}}
			return p
		}(), podStatus(running("id0", "init", 0)),
			conds{v1.PodReady: F, v1.ContainersReady: F, v1.PodInitialized: F, v1.PodScheduled: T, v1.PodReadyToStartContainers: T}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := Generate(Input{Pod: tc.pod, Runtime: tc.ps, RuntimeName: "podman", HostIPs: []string{"192.168.1.2"}})
			checkSandboxReason(t, st)
			if len(st.Conditions) != len(tc.want) {
				t.Errorf("conditions = %+v", st.Conditions)
			}
			for typ, want := range tc.want {
				if got := condStatus(st, typ); got != want {
					t.Errorf("%s = %s; want %s", typ, got, want)
				}
			}
			if st.HostIP != "192.168.1.2" || len(st.HostIPs) != 1 {
				t.Errorf("hostIP = %q %v", st.HostIP, st.HostIPs)
			}
		})
	}
	st := Generate(Input{Pod: testPod(v1.RestartPolicyAlways, "c"), Runtime: podStatus(running("id1", "c", 0)), RuntimeName: "podman"})
	if st.PodIP != "10.88.0.5" || len(st.PodIPs) != 2 || st.PodIPs[1].IP != "fd00::5" {
		t.Errorf("podIP = %q %v; want the sandbox's IPs", st.PodIP, st.PodIPs)
	}
	hn := testPod(v1.RestartPolicyAlways, "c")
	hn.Spec.HostNetwork = true
	st = Generate(Input{Pod: hn, Runtime: podStatus(running("id1", "c", 0)), RuntimeName: "podman", HostIPs: []string{"192.168.1.2"}})
	if st.PodIP != "192.168.1.2" || len(st.PodIPs) != 1 {
		t.Errorf("hostNetwork podIP = %q %v; want the host IP", st.PodIP, st.PodIPs)
	}
}

func TestGenerateInitFailedNever(t *testing.T) {
	p := testPod(v1.RestartPolicyNever, "c")
	p.Spec.InitContainers = []v1.Container{{Name: "init"}}
	st := Generate(Input{Pod: p, Runtime: podStatus(exited("id0", "init", 0, 1)), RuntimeName: "podman"})
	if st.Phase != v1.PodFailed || condStatus(st, v1.PodInitialized) != v1.ConditionFalse {
		t.Errorf("phase %s initialized %s; want Failed, False", st.Phase, condStatus(st, v1.PodInitialized))
	}
}
