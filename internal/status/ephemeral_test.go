package status

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestGenerateEphemeralStatuses: ephemeral containers get statuses of their
// own (waiting, running, terminated), are never ready, and leave the pod's
// phase and readiness alone.
func TestGenerateEphemeralStatuses(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "main")
	for _, n := range []string{"dbg-new", "dbg-run", "dbg-done"} {
		pod.Spec.EphemeralContainers = append(pod.Spec.EphemeralContainers, v1.EphemeralContainer{
			EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: n, Image: "img:" + n}})
	}
	st := Generate(Input{Pod: pod, RuntimeName: "podman",
		Runtime: podStatus(running("c1", "main", 0), running("c2", "dbg-run", 0), exited("c3", "dbg-done", 0, 3))})

	if len(st.EphemeralContainerStatuses) != 3 {
		t.Fatalf("ephemeral statuses = %+v", st.EphemeralContainerStatuses)
	}
	byName := map[string]v1.ContainerStatus{}
	for _, cs := range st.EphemeralContainerStatuses {
		byName[cs.Name] = cs
		if cs.Ready || cs.Started != nil {
			t.Errorf("%s: ready=%v started=%v, want not ready and no started flag", cs.Name, cs.Ready, cs.Started)
		}
	}
	if w := byName["dbg-new"].State.Waiting; w == nil || w.Reason != "ContainerCreating" {
		t.Errorf("dbg-new state = %+v, want waiting ContainerCreating", byName["dbg-new"].State)
	}
	if r := byName["dbg-run"]; r.State.Running == nil || r.ContainerID != "podman://c2" {
		t.Errorf("dbg-run = %+v, want running podman://c2", r)
	}
	if d := byName["dbg-done"].State.Terminated; d == nil || d.ExitCode != 3 {
		t.Errorf("dbg-done state = %+v, want terminated with 3", byName["dbg-done"].State)
	}
	if st.Phase != v1.PodRunning || condStatus(st, v1.PodReady) != v1.ConditionTrue {
		t.Errorf("phase %s ready %s: ephemeral containers must not change them", st.Phase, condStatus(st, v1.PodReady))
	}
	if len(st.ContainerStatuses) != 1 {
		t.Errorf("container statuses = %+v, want only main", st.ContainerStatuses)
	}
}
