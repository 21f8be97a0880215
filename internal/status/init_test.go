package status

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func initPod(policy v1.RestartPolicy, sidecars []string, inits ...string) *v1.Pod {
	p := testPod(policy, "run")
	always := v1.ContainerRestartPolicyAlways
	for _, n := range inits {
		c := v1.Container{Name: n, Image: "img:" + n}
		for _, s := range sidecars {
			if s == n {
				c.RestartPolicy = &always
			}
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, c)
	}
	return p
}

func podCond(st v1.PodStatus, typ v1.PodConditionType) v1.PodCondition {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return v1.PodCondition{}
}

func waitingFor(t *testing.T, cs v1.ContainerStatus, reason string) {
	t.Helper()
	if cs.State.Waiting == nil || cs.State.Waiting.Reason != reason {
		t.Errorf("%s: state %+v, want waiting %s", cs.Name, cs.State, reason)
	}
}

// TestInitStatusesRestartAlwaysFailing is what the upstream spec "should not
// start app containers if init containers fail on a RestartAlways pod" reads:
// the later init container and the app container wait PodInitializing, the
// failed one waits to restart with its exit as the last state, the pod is
// Pending and not Initialized, naming both init containers.
func TestInitStatusesRestartAlwaysFailing(t *testing.T) {
	pod := initPod(v1.RestartPolicyAlways, nil, "init1", "init2")
	st := Generate(Input{Pod: pod, Runtime: podStatus(exited("id1", "init1", 0, 1)), RuntimeName: "podman",
		Waiting: map[string]Waiting{"init1": {Reason: "CrashLoopBackOff"}}})
	if st.Phase != v1.PodPending {
		t.Errorf("phase %s, want Pending", st.Phase)
	}
	init1 := st.InitContainerStatuses[0]
	waitingFor(t, init1, "CrashLoopBackOff")
	if last := init1.LastTerminationState.Terminated; last == nil || last.ExitCode != 1 || init1.Ready {
		t.Errorf("init1 = %+v; want its exit 1 as last state, not ready", init1)
	}
	waitingFor(t, st.InitContainerStatuses[1], "PodInitializing")
	waitingFor(t, st.ContainerStatuses[0], "PodInitializing")
	c := podCond(st, v1.PodInitialized)
	if c.Status != v1.ConditionFalse || c.Reason != "ContainersNotInitialized" || c.Message != "containers with incomplete status: [init1 init2]" {
		t.Errorf("Initialized = %+v", c)
	}
}

// TestInitStatusesRestartNeverFailed: "should not start app containers and
// fail the pod if init containers fail on a RestartNever pod".
func TestInitStatusesRestartNeverFailed(t *testing.T) {
	pod := initPod(v1.RestartPolicyNever, nil, "init1", "init2")
	st := Generate(Input{Pod: pod, Runtime: podStatus(exited("id1", "init1", 0, 0), exited("id2", "init2", 0, 1)),
		RuntimeName: "podman", Terminal: true})
	if st.Phase != v1.PodFailed {
		t.Errorf("phase %s, want Failed", st.Phase)
	}
	if cs := st.InitContainerStatuses[0]; cs.State.Terminated == nil || !cs.Ready {
		t.Errorf("init1 = %+v; want terminated and ready", cs)
	}
	if cs := st.InitContainerStatuses[1]; cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 1 || cs.Ready {
		t.Errorf("init2 = %+v; want terminated 1, not ready", cs)
	}
	waitingFor(t, st.ContainerStatuses[0], "PodInitializing")
	if c := podCond(st, v1.PodInitialized); c.Status != v1.ConditionFalse || c.Message != "containers with incomplete status: [init2]" {
		t.Errorf("Initialized = %+v", c)
	}
}

// TestInitStatusesNotStartedYet: before anything runs, every container of a
// pod with init containers waits PodInitializing, init containers included.
func TestInitStatusesNotStartedYet(t *testing.T) {
	st := Generate(Input{Pod: initPod(v1.RestartPolicyAlways, nil, "init1"), Runtime: podStatus(), RuntimeName: "podman"})
	waitingFor(t, st.InitContainerStatuses[0], "PodInitializing")
	waitingFor(t, st.ContainerStatuses[0], "PodInitializing")
}

func TestSidecarStatuses(t *testing.T) {
	pod := initPod(v1.RestartPolicyAlways, []string{"sc"}, "init1", "sc")
	// The sidecar runs, the regular init container is done, the app runs.
	st := Generate(Input{Pod: pod, RuntimeName: "podman",
		Runtime: podStatus(exited("id1", "init1", 0, 0), running("id2", "sc", 0), running("id3", "run", 0))})
	if st.Phase != v1.PodRunning {
		t.Errorf("phase %s, want Running", st.Phase)
	}
	if sc := st.InitContainerStatuses[1]; sc.State.Running == nil || !sc.Ready || sc.Started == nil || !*sc.Started {
		t.Errorf("sidecar = %+v; want running, started, ready", sc)
	}
	for _, typ := range []v1.PodConditionType{v1.PodInitialized, v1.ContainersReady, v1.PodReady} {
		if c := podCond(st, typ); c.Status != v1.ConditionTrue {
			t.Errorf("%s = %+v", typ, c)
		}
	}
	// It crashed and waits to restart: the pod stays Running and
	// Initialized, but not ready.
	st = Generate(Input{Pod: pod, RuntimeName: "podman", Waiting: map[string]Waiting{"sc": {Reason: "CrashLoopBackOff"}},
		Runtime: podStatus(exited("id1", "init1", 0, 0), exited("id2", "sc", 0, 1), running("id3", "run", 0))})
	if st.Phase != v1.PodRunning || podCond(st, v1.PodInitialized).Status != v1.ConditionTrue {
		t.Errorf("phase %s, Initialized %s; want Running, True", st.Phase, podCond(st, v1.PodInitialized).Status)
	}
	if c := podCond(st, v1.ContainersReady); c.Status != v1.ConditionFalse || c.Message != "containers with unready status: [sc]" {
		t.Errorf("ContainersReady = %+v", c)
	}
	// Before the app container exists the pod is Pending.
	st = Generate(Input{Pod: pod, RuntimeName: "podman", Runtime: podStatus(exited("id1", "init1", 0, 0), running("id2", "sc", 0))})
	if st.Phase != v1.PodPending {
		t.Errorf("phase %s, want Pending", st.Phase)
	}
	waitingFor(t, st.ContainerStatuses[0], "PodInitializing")
}

func TestTerminationMessagesInStatus(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "a", "b", "c")
	long := strings.Repeat("x", 5000)
	oom := exited("id0", "c", 0, 137)
	oom.Error = "OOM"
	st := Generate(Input{Pod: pod, RuntimeName: "podman",
		Runtime:  podStatus(exited("id1", "a", 0, 0), exited("id2", "b", 0, 1), running("id3", "b", 1), oom),
		Messages: map[string]string{"id1": "DONE", "id2": long, "id0": "bye"}})
	if got := st.ContainerStatuses[0].State.Terminated.Message; got != "DONE" {
		t.Errorf("a: message %q, want DONE", got)
	}
	// 12 KiB for the pod, shared by its 3 containers: 4096 bytes each.
	if got := st.ContainerStatuses[1].LastTerminationState.Terminated.Message; len(got) != 4096 {
		t.Errorf("b: last state message of %d bytes, want 4096", len(got))
	}
	if got := st.ContainerStatuses[2].State.Terminated.Message; got != "OOM: bye" {
		t.Errorf("c: message %q, want the runtime's then the container's", got)
	}
}
