package podutil

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// UpdatePodCondition replaces the status' condition of the same type, or
// adds it, stamped now; a condition whose status did not change keeps its
// transition time. The node's own kills (eviction, node shutdown) set
// DisruptionTarget with it.
func UpdatePodCondition(status *v1.PodStatus, condition *v1.PodCondition) {
	c := *condition
	c.LastTransitionTime = metav1.Now()
	for i := range status.Conditions {
		if status.Conditions[i].Type != c.Type {
			continue
		}
		if status.Conditions[i].Status == c.Status {
			c.LastTransitionTime = status.Conditions[i].LastTransitionTime
		}
		status.Conditions[i] = c
		return
	}
	status.Conditions = append(status.Conditions, c)
}
