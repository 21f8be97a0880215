package status

import v1 "k8s.io/api/core/v1"

// ephemeralStatuses reports the pod's ephemeral containers as the kubelet
// does: like its other containers, but never ready (no probe may gate them,
// and they take no part in the pod's readiness) and without a started flag.
func ephemeralStatuses(in Input) []v1.ContainerStatus {
	ecs := in.Pod.Spec.EphemeralContainers
	if len(ecs) == 0 {
		return nil
	}
	waitReason := "ContainerCreating"
	if len(in.Pod.Spec.InitContainers) > 0 {
		waitReason = "PodInitializing"
	}
	out := make([]v1.ContainerStatus, 0, len(ecs))
	for i := range ecs {
		cs := containerStatus(in, v1.Container(ecs[i].EphemeralContainerCommon), waitReason)
		cs.Ready, cs.Started = false, nil
		out = append(out, cs)
	}
	return out
}
