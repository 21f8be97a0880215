package kuberuntime

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// Unsupported lists the fields of the pod that runlet accepts but does not
// honour yet, so a user is told instead of being silently ignored.
func Unsupported(pod *v1.Pod) []string {
	var out []string
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil {
			out = append(out, fmt.Sprintf("initContainers[%s].restartPolicy (sidecars)", c.Name))
		}
		out = append(out, unsupportedInContainer(&c)...)
	}
	for _, ec := range pod.Spec.EphemeralContainers {
		if ec.TargetContainerName != "" {
			out = append(out, fmt.Sprintf("ephemeralContainers[%s].targetContainerName (process namespace of a container)", ec.Name))
		}
	}
	for _, c := range pod.Spec.Containers {
		out = append(out, unsupportedInContainer(&c)...)
	}
	return out
}

func unsupportedInContainer(c *v1.Container) []string {
	var out []string
	field := func(name string) string { return fmt.Sprintf("containers[%s].%s", c.Name, name) }
	if c.LivenessProbe != nil {
		out = append(out, field("livenessProbe"))
	}
	if c.ReadinessProbe != nil {
		out = append(out, field("readinessProbe"))
	}
	if c.StartupProbe != nil {
		out = append(out, field("startupProbe"))
	}
	if c.Lifecycle != nil {
		out = append(out, field("lifecycle"))
	}
	if len(c.VolumeMounts) > 0 {
		out = append(out, field("volumeMounts"))
	}
	return out
}
