package status

import (
	"github.com/runlet/runlet/internal/podutil"
	v1 "k8s.io/api/core/v1"
)

// Waiting reasons of a container not created yet, as the kubelet's.
const (
	reasonContainerCreating = "ContainerCreating"
	reasonPodInitializing   = "PodInitializing"
)

// defaultWaitingReason is why a container not created yet waits: in a pod
// with init containers every container, init or not, waits PodInitializing
// (the kubelet's convertToAPIContainerStatuses), else ContainerCreating.
func defaultWaitingReason(pod *v1.Pod) string {
	if len(pod.Spec.InitContainers) > 0 {
		return reasonPodInitializing
	}
	return reasonContainerCreating
}

// initContainerStatuses reports the init containers. A regular init
// container is ready once it exited 0; a sidecar reports like a regular
// container (ready while it runs).
func initContainerStatuses(in Input, waitReason string) []v1.ContainerStatus {
	out := containerStatuses(in, in.Pod.Spec.InitContainers, waitReason)
	regularCreated := regularContainerActive(in)
	for i := range out {
		c := &in.Pod.Spec.InitContainers[i]
		if podutil.IsRestartableInitContainer(c) {
			continue
		}
		cs := &out[i]
		if cs.ContainerID == "" && regularCreated {
			// Its container is gone, but the regular containers exist: it
			// succeeded, as the kubelet infers.
			cs.State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{Reason: "Completed",
				Message: "Unable to get init container status from container runtime and pod has been initialized, treat it as exited normally"}}
		}
		cs.Ready = cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 0
	}
	return out
}

// regularContainerActive reports a pod initialized in its current sandbox: a
// regular container exists there (the kubelet's
// HasAnyActiveRegularContainerStarted).
func regularContainerActive(in Input) bool {
	sb := in.Runtime.Sandbox()
	for _, c := range in.Pod.Spec.Containers {
		cur, _ := in.Runtime.Latest(c.Name)
		if cur != nil && (sb == nil || cur.SandboxID == "" || cur.SandboxID == sb.ID) {
			return true
		}
	}
	return false
}
