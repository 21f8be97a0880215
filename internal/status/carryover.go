package status

import (
	v1 "k8s.io/api/core/v1"
)

// ReasonContainerStatusUnknown is the last state of a container that was
// running and is gone from the backend, as the kubelet reports it.
const ReasonContainerStatusUnknown = "ContainerStatusUnknown"

// oldStatus is the last status of the container named name, from in.Old or
// else the pod's own status.
func (in Input) oldStatus(name string) *v1.ContainerStatus {
	old := in.old()
	for _, list := range [][]v1.ContainerStatus{old.ContainerStatuses, old.InitContainerStatuses} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// carryOver fills the status of a container the backend has no record of
// (its podman pod was removed behind runlet's back, or podman lost its
// state) from its last status, as the kubelet's
// convertToAPIContainerStatuses does: a terminated container stays
// terminated; otherwise the restart count and last termination are kept,
// and a container that was running is taken for killed (exit 137,
// ContainerStatusUnknown) and counted as restarted unless the pod is being
// deleted.
func carryOver(cs *v1.ContainerStatus, old *v1.ContainerStatus, deleted bool) {
	if old.State.Terminated != nil {
		*cs = *old.DeepCopy()
		return
	}
	cs.RestartCount = old.RestartCount
	cs.LastTerminationState = *old.LastTerminationState.DeepCopy()
	if old.State.Running == nil || cs.LastTerminationState.Terminated != nil {
		return
	}
	cs.LastTerminationState.Terminated = &v1.ContainerStateTerminated{
		Reason:   ReasonContainerStatusUnknown,
		Message:  "The container could not be located when the pod was deleted.  The container used to be Running",
		ExitCode: 137,
	}
	if !deleted {
		cs.RestartCount++
	}
}
