package envvars

import v1 "k8s.io/api/core/v1"

// ResourceFieldRef is a container's resource as the downward API gives it,
// rounded up to the divisor: the same value for env and for downwardAPI
// volumes (internal/volume).
func ResourceFieldRef(pod *v1.Pod, c *v1.Container, ref *v1.ResourceFieldSelector) (string, error) {
	return resourceValue(pod, c, ref)
}
