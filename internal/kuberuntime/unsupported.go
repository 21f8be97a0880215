package kuberuntime

import (
	v1 "k8s.io/api/core/v1"
)

// Unsupported lists the fields of the pod that runlet accepts but does not
// honour yet, so a user is told instead of being silently ignored.
func Unsupported(pod *v1.Pod) []string {
	var out []string
	if len(pod.Spec.EphemeralContainers) > 0 {
		out = append(out, "spec.ephemeralContainers")
	}
	return out
}
