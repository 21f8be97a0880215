package envvars

import (
	"fmt"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/kubectl/pkg/util/fieldpath"
)

// fieldValue is the downward API's value of a pod field: the kubelet's own
// fields first, metadata through the ecosystem's field path helper.
func fieldValue(pod Pod, path string) (string, error) {
	switch path {
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP":
		return first(pod.HostIPs), nil
	case "status.hostIPs":
		return strings.Join(pod.HostIPs, ","), nil
	case "status.podIP":
		return first(pod.PodIPs), nil
	case "status.podIPs":
		return strings.Join(pod.PodIPs, ","), nil
	}
	return fieldpath.ExtractFieldPathAsString(pod.Pod, path)
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// resourceValue is a resourceFieldRef's value, rounded up to its divisor.
func resourceValue(pod *v1.Pod, c *v1.Container, ref *v1.ResourceFieldSelector) (string, error) {
	// The selector may name another container of the pod, as on the kubelet.
	if ref.ContainerName != "" && ref.ContainerName != c.Name {
		if c = podContainer(pod, ref.ContainerName); c == nil {
			return "", fmt.Errorf("container %q not found in pod", ref.ContainerName)
		}
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	q, err := resourceQuantity(c, ref.Resource)
	if err != nil {
		return "", err
	}
	if strings.HasSuffix(ref.Resource, "cpu") {
		m, d := q.MilliValue(), divisor.MilliValue()
		return strconv.FormatInt((m+d-1)/d, 10), nil
	}
	return strconv.FormatInt((q.Value()+divisor.Value()-1)/divisor.Value(), 10), nil
}

func resourceQuantity(c *v1.Container, name string) (resource.Quantity, error) {
	switch name {
	case "limits.cpu":
		return c.Resources.Limits[v1.ResourceCPU], nil
	case "requests.cpu":
		return c.Resources.Requests[v1.ResourceCPU], nil
	case "limits.memory":
		return c.Resources.Limits[v1.ResourceMemory], nil
	case "requests.memory":
		return c.Resources.Requests[v1.ResourceMemory], nil
	case "limits.ephemeral-storage":
		return c.Resources.Limits[v1.ResourceEphemeralStorage], nil
	case "requests.ephemeral-storage":
		return c.Resources.Requests[v1.ResourceEphemeralStorage], nil
	}
	return resource.Quantity{}, fmt.Errorf("unsupported resourceFieldRef %q", name)
}

func podContainer(pod *v1.Pod, name string) *v1.Container {
	for _, list := range [][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}
