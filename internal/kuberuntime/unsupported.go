package kuberuntime

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// Unsupported lists the fields of the pod that runlet accepts but does not
// honour yet, so a user is told instead of being silently ignored.
func Unsupported(pod *v1.Pod) []string {
	var out []string
	for _, ec := range pod.Spec.EphemeralContainers {
		if ec.TargetContainerName != "" {
			out = append(out, fmt.Sprintf("ephemeralContainers[%s].targetContainerName (process namespace of a container)", ec.Name))
		}
	}
	return out
}
