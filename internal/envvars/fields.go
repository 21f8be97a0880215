package envvars

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
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

// ResourceFieldValue is a resourceFieldRef's value for container c of the
// pod (c may be nil when ref names the container), rounded up to its
// divisor. A limit the container does not set is the pod-level limit, else
// the node's allocatable, as the kubelet's defaultPodLimitsForDownwardAPI
// makes it. The downward API volume resolves its items with it too.
func ResourceFieldValue(pod *v1.Pod, c *v1.Container, ref *v1.ResourceFieldSelector, allocatable v1.ResourceList) (string, error) {
	// The selector may name another container of the pod, as on the kubelet.
	if ref.ContainerName != "" && (c == nil || ref.ContainerName != c.Name) {
		if c = podContainer(pod, ref.ContainerName); c == nil {
			return "", fmt.Errorf("container %q not found in pod", ref.ContainerName)
		}
	}
	if c == nil {
		return "", fmt.Errorf("resourceFieldRef %q names no container", ref.Resource)
	}
	divisor := ref.Divisor
	if divisor.Sign() <= 0 {
		divisor = resource.MustParse("1")
	}
	q, err := resourceQuantity(c, ref.Resource, defaultLimits(pod, allocatable))
	if err != nil {
		return "", err
	}
	if strings.HasSuffix(ref.Resource, "cpu") {
		return ceilDiv(q.MilliValue(), divisor.MilliValue()), nil
	}
	return ceilDiv(q.Value(), divisor.Value()), nil
}

// ceilDiv is the kubelet's math.Ceil(float64(n) / float64(d)), as a string.
func ceilDiv(n, d int64) string {
	if d <= 0 {
		d = 1
	}
	return strconv.FormatInt(int64(math.Ceil(float64(n)/float64(d))), 10)
}

// defaultLimits are the limits a container without its own gets: the
// pod-level ones where set, else the node's allocatable.
func defaultLimits(pod *v1.Pod, allocatable v1.ResourceList) v1.ResourceList {
	if pod.Spec.Resources == nil || !resourcehelper.IsPodLevelLimitsSet(pod) {
		return allocatable
	}
	out := allocatable.DeepCopy()
	if out == nil {
		out = v1.ResourceList{}
	}
	for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory} {
		if q, ok := pod.Spec.Resources.Limits[name]; ok && !q.IsZero() {
			out[name] = q.DeepCopy()
		}
	}
	return out
}

// resourceQuantity is the kubelet's ExtractContainerResourceValue on a
// container whose missing (or zero) cpu, memory and ephemeral-storage limits
// are defaults' (MergeContainerResourceLimits).
func resourceQuantity(c *v1.Container, name string, defaults v1.ResourceList) (resource.Quantity, error) {
	limit := func(r v1.ResourceName) resource.Quantity {
		if q, ok := c.Resources.Limits[r]; ok && !q.IsZero() {
			return q
		}
		return defaults[r]
	}
	switch name {
	case "limits.cpu":
		return limit(v1.ResourceCPU), nil
	case "requests.cpu":
		return c.Resources.Requests[v1.ResourceCPU], nil
	case "limits.memory":
		return limit(v1.ResourceMemory), nil
	case "requests.memory":
		return c.Resources.Requests[v1.ResourceMemory], nil
	case "limits.ephemeral-storage":
		return limit(v1.ResourceEphemeralStorage), nil
	case "requests.ephemeral-storage":
		return c.Resources.Requests[v1.ResourceEphemeralStorage], nil
	}
	// hugepages-<size> are never overcommitted: no default, the container's own.
	if kind, res, ok := strings.Cut(name, "."); ok && strings.HasPrefix(res, v1.ResourceHugePagesPrefix) {
		switch kind {
		case "limits":
			return c.Resources.Limits[v1.ResourceName(res)], nil
		case "requests":
			return c.Resources.Requests[v1.ResourceName(res)], nil
		}
	}
	return resource.Quantity{}, fmt.Errorf("unsupported container resource : %v", name)
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
