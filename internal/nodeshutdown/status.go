package nodeshutdown

import (
	"github.com/runlet/runlet/internal/podutil"
	v1 "k8s.io/api/core/v1"
)

// markShutdown is the status of a pod the node shutdown stopped, as the
// kubelet's: Failed (unless it had already succeeded), reason Terminated,
// and a DisruptionTarget condition that says the node ended it.
func markShutdown(st *v1.PodStatus, generation int64) {
	if st.Phase != v1.PodSucceeded {
		st.Phase = v1.PodFailed
	}
	st.Reason, st.Message = shutdownReason, shutdownMessage
	podutil.UpdatePodCondition(st, &v1.PodCondition{
		Type:               v1.DisruptionTarget,
		ObservedGeneration: generation,
		Status:             v1.ConditionTrue,
		Reason:             v1.PodReasonTerminationByKubelet,
		Message:            shutdownMessage,
	})
}
