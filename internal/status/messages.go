package status

import (
	v1 "k8s.io/api/core/v1"
)

// maxPodTerminationMessages is how many bytes of termination messages one
// pod's status carries, shared evenly by its containers (the kubelet's
// MaxPodTerminationMessageLogLength).
const maxPodTerminationMessages = 12 * 1024

// joinMessage puts the container's own termination message after the
// runtime's, as the kubelet does.
func joinMessage(runtimeMsg, msg string) string {
	switch {
	case msg == "":
		return runtimeMsg
	case runtimeMsg == "":
		return msg
	}
	return runtimeMsg + ": " + msg
}

// capMessages cuts every termination message to the pod's share per
// container, as the kubelet's normalizeStatus does.
func capMessages(pod *v1.Pod, st *v1.PodStatus) {
	per := maxPodTerminationMessages
	if n := len(pod.Spec.Containers) + len(pod.Spec.InitContainers) + len(pod.Spec.EphemeralContainers); n > 0 {
		per /= n
	}
	cut := func(t *v1.ContainerStateTerminated) {
		if t != nil && len(t.Message) > per {
			t.Message = t.Message[:per]
		}
	}
	for _, list := range [][]v1.ContainerStatus{st.InitContainerStatuses, st.ContainerStatuses} {
		for i := range list {
			cut(list[i].State.Terminated)
			cut(list[i].LastTerminationState.Terminated)
		}
	}
}
