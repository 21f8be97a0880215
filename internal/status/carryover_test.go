package status

import (
	"testing"

	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestGenerateCarriesOverLostContainers: containers the backend lost keep
// what their last status said, as the kubelet's
// convertToAPIContainerStatuses keeps it.
func TestGenerateCarriesOverLostContainers(t *testing.T) {
	pod := testPod(v1.RestartPolicyNever, "done", "run", "new")
	old := &v1.PodStatus{ContainerStatuses: []v1.ContainerStatus{
		{Name: "done", ContainerID: "podman://a", RestartCount: 2,
			State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}},
		{Name: "run", ContainerID: "podman://b", RestartCount: 1,
			State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(tStart)}}},
	}}
	st := Generate(Input{Pod: pod, Runtime: &runtime.PodStatus{UID: "uid"}, RuntimeName: "podman", Old: old})
	done, run, fresh := st.ContainerStatuses[0], st.ContainerStatuses[1], st.ContainerStatuses[2]
	if done.State.Terminated == nil || done.ContainerID != "podman://a" || done.RestartCount != 2 {
		t.Errorf("done = %+v; want its terminated status kept", done)
	}
	if run.State.Waiting == nil || run.RestartCount != 2 || run.LastTerminationState.Terminated == nil ||
		run.LastTerminationState.Terminated.Reason != ReasonContainerStatusUnknown || run.LastTerminationState.Terminated.ExitCode != 137 {
		t.Errorf("run = %+v; want waiting, restarted once more, last state ContainerStatusUnknown 137", run)
	}
	if fresh.State.Waiting == nil || fresh.State.Waiting.Reason != "ContainerCreating" || fresh.RestartCount != 0 {
		t.Errorf("new = %+v; want ContainerCreating", fresh)
	}
	if st.Phase != v1.PodPending {
		t.Errorf("phase %s; want Pending while a container never started", st.Phase)
	}
	two := testPod(v1.RestartPolicyNever, "done", "run")
	if st := Generate(Input{Pod: two, Runtime: &runtime.PodStatus{UID: "uid"}, RuntimeName: "podman", Old: old}); st.Phase != v1.PodFailed {
		t.Errorf("phase %s; want Failed: under Never the lost running container counts as killed", st.Phase)
	}

	// A pod being deleted does not count the lost container as restarted.
	now := metav1.Now()
	pod.DeletionTimestamp = &now
	st = Generate(Input{Pod: pod, Runtime: &runtime.PodStatus{UID: "uid"}, RuntimeName: "podman", Old: old})
	if rc := st.ContainerStatuses[1].RestartCount; rc != 1 {
		t.Errorf("restart count of a deleted pod's lost container = %d; want 1", rc)
	}
}
