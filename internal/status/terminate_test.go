package status

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestTerminatePod: a pod whose containers never started ends Failed, its
// containers terminated with 137; before initialization only the first init
// container is marked so.
func TestTerminatePod(t *testing.T) {
	m := NewManager(Config{})
	pod := testPod(v1.RestartPolicyAlways, "c")
	m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodPending, ContainerStatuses: []v1.ContainerStatus{
		{Name: "c", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ErrImagePull"}}}}})
	m.TerminatePod(pod)
	got, _ := m.GetPod(pod.UID)
	term := got.Status.ContainerStatuses[0].State.Terminated
	if got.Status.Phase != v1.PodFailed || term == nil || term.ExitCode != 137 || term.Reason != "ContainerStatusUnknown" {
		t.Errorf("status %s %+v; want Failed, the container terminated 137", got.Status.Phase, got.Status.ContainerStatuses[0].State)
	}

	withInit := initPod(v1.RestartPolicyAlways, nil, "init1", "init2")
	withInit.UID = "uid-init"
	waiting := func(name string) v1.ContainerStatus {
		return v1.ContainerStatus{Name: name, State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "PodInitializing"}}}
	}
	m.SetPodStatus(withInit, v1.PodStatus{Phase: v1.PodPending,
		InitContainerStatuses: []v1.ContainerStatus{waiting("init1"), waiting("init2")},
		ContainerStatuses:     []v1.ContainerStatus{waiting("run")}})
	m.TerminatePod(withInit)
	got, _ = m.GetPod(withInit.UID)
	if got.Status.InitContainerStatuses[0].State.Terminated == nil || got.Status.InitContainerStatuses[1].State.Waiting == nil ||
		got.Status.ContainerStatuses[0].State.Waiting == nil || got.Status.Phase != v1.PodFailed {
		t.Errorf("status %+v; want init1 terminated, init2 and run waiting, Failed", got.Status)
	}
}

// TestDelayTerminal: no terminal phase while a container still runs.
func TestDelayTerminal(t *testing.T) {
	m := NewManager(Config{})
	pod := testPod(v1.RestartPolicyAlways, "c")
	m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodRunning})
	st := v1.PodStatus{Phase: v1.PodFailed, Reason: "DeadlineExceeded"}
	m.DelayTerminal(pod, &st, podStatus(running("id1", "c", 0)))
	if st.Phase != v1.PodRunning || st.Reason != "" {
		t.Errorf("phase %s reason %q while the container runs; want Running", st.Phase, st.Reason)
	}
	st = v1.PodStatus{Phase: v1.PodFailed, Reason: "DeadlineExceeded"}
	m.DelayTerminal(pod, &st, podStatus(exited("id1", "c", 0, 143)))
	if st.Phase != v1.PodFailed || st.Reason != "DeadlineExceeded" {
		t.Errorf("phase %s reason %q once stopped; want Failed DeadlineExceeded", st.Phase, st.Reason)
	}
}
