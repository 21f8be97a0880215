package status

import (
	"github.com/runlet/runlet/internal/podutil"
	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
)

// A container that exits by a RestartAllContainers rule restarts the whole
// pod in place, as the v1.37 kubelet does it (RestartAllContainersOnContainerExits):
// the AllContainersRestarting condition turns True, the pod's sync removes
// every container, and the condition turns False once none is left; the
// containers then start again from the first init container, in the same
// sandbox. Their statuses keep counting restarts through the removal.

// ReasonRestartingAllContainers is the state of a container removed by a
// RestartAllContainers restart until it runs again.
const ReasonRestartingAllContainers = "RestartingAllContainers"

const (
	reasonRestartAllContainersStarted = "RestartAllContainersStarted"
	messageRemovedForRestartAll       = "The container is removed because RestartAllContainers in place"
)

// AllContainersRestarting reports a status whose AllContainersRestarting
// condition is True: the pod's sync is to remove every container.
func AllContainersRestarting(st *v1.PodStatus) bool {
	c := findCondition(st.Conditions, v1.AllContainersRestarting)
	return c != nil && c.Status == v1.ConditionTrue
}

// old is the pod's last status: in.Old, else the pod's own.
func (in Input) old() *v1.PodStatus {
	if in.Old != nil {
		return in.Old
	}
	return &in.Pod.Status
}

// restartingAll is the kubelet's ShouldAllContainersRestart: the last
// status says the pod is restarting all its containers, or a container
// exited, by the backend or by the last status, with a RestartAllContainers
// rule.
func restartingAll(in Input) bool {
	if AllContainersRestarting(in.old()) {
		return true
	}
	for _, list := range [][]v1.Container{in.Pod.Spec.InitContainers, in.Pod.Spec.Containers} {
		for i := range list {
			c := &list[i]
			if cur, _ := in.Runtime.Latest(c.Name); cur != nil && cur.State == runtime.ContainerExited &&
				podutil.RestartsAllContainers(c, int32(cur.ExitCode)) {
				return true
			}
			if cs := in.oldStatus(c.Name); cs != nil && cs.State.Terminated != nil &&
				podutil.RestartsAllContainers(c, cs.State.Terminated.ExitCode) {
				return true
			}
		}
	}
	return false
}

// allRemoved reports that the backend holds none of the pod's init and
// regular containers.
func allRemoved(pod *v1.Pod, rs *runtime.PodStatus) bool {
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			if cur, _ := rs.Latest(list[i].Name); cur != nil {
				return false
			}
		}
	}
	return true
}

// allContainersRestartingCondition is the kubelet's
// GenerateAllContainersRestartingCondition.
func allContainersRestartingCondition(in Input, phase v1.PodPhase) v1.PodCondition {
	cond := v1.PodCondition{Type: v1.AllContainersRestarting, Status: v1.ConditionFalse}
	switch {
	case phase == v1.PodSucceeded:
		cond.Reason = podCompleted
	case phase == v1.PodFailed:
		cond.Reason = podFailed
	case in.restartingAll && !allRemoved(in.Pod, in.Runtime):
		cond.Status, cond.Reason, cond.Message = v1.ConditionTrue, reasonRestartAllContainersStarted, "container exited with restart policy rule"
	}
	return cond
}

// removedForRestartAll is the status of a container a RestartAllContainers
// restart removed, until it runs again: waiting, its last state the kill,
// counted as one more restart.
func removedForRestartAll(cs *v1.ContainerStatus, old *v1.ContainerStatus) {
	cs.State = v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: ReasonRestartingAllContainers, Message: messageRemovedForRestartAll}}
	cs.LastTerminationState = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
		Reason: ReasonRestartingAllContainers, Message: messageRemovedForRestartAll, ExitCode: 137}}
	cs.RestartCount = old.RestartCount + 1
}

// keepRestartCount carries a container's restarts and last end over from
// its last status where a RestartAllContainers restart removed the backend's
// record of them, as the kubelet's convertToAPIContainerStatuses does: the
// count never goes back, a container running again after its last status
// showed it ended counts one more, and the last end is the last status's
// when the backend has no earlier run.
func keepRestartCount(cs *v1.ContainerStatus, old *v1.ContainerStatus, hasPrev bool) {
	cs.RestartCount = max(cs.RestartCount, old.RestartCount)
	if cs.State.Running != nil && old.State.Terminated != nil && old.ContainerID != cs.ContainerID && old.RestartCount >= cs.RestartCount {
		cs.RestartCount = old.RestartCount + 1
	}
	if hasPrev {
		return
	}
	switch {
	case old.ContainerID != cs.ContainerID && old.State.Terminated != nil:
		cs.LastTerminationState.Terminated = old.State.Terminated.DeepCopy()
	case old.LastTerminationState.Terminated != nil:
		cs.LastTerminationState.Terminated = old.LastTerminationState.Terminated.DeepCopy()
	}
}

// restartableByReset reports a stop that a RestartAllContainers restart
// caused: the container runs again, whatever its policy says.
func restartableByReset(t *v1.ContainerStateTerminated) bool {
	return t != nil && t.Reason == ReasonRestartingAllContainers
}

// keepInitialized keeps the Initialized condition True once the last status
// had it: the init containers run again after a RestartAllContainers
// restart, but a pod once initialized is never uninitialized.
func keepInitialized(conds []v1.PodCondition, old *v1.PodStatus) {
	was := findCondition(old.Conditions, v1.PodInitialized)
	if was == nil || was.Status != v1.ConditionTrue {
		return
	}
	for i := range conds {
		if conds[i].Type == v1.PodInitialized && conds[i].Status != v1.ConditionTrue {
			conds[i] = v1.PodCondition{Type: v1.PodInitialized, Status: v1.ConditionTrue}
		}
	}
}
