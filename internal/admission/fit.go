package admission

import (
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// insufficient is the kubelet's InsufficientResourceError
// (pkg/kubelet/lifecycle/predicate.go): requested, used and capacity in the
// resource's unit (millicores for cpu, bytes for memory).
type insufficient struct {
	name                       v1.ResourceName
	requested, used, allocated int64
}

func (e insufficient) result() Result {
	reason := "OutOf" + string(e.name)
	switch e.name {
	case v1.ResourceCPU:
		reason = "OutOfcpu"
	case v1.ResourceMemory:
		reason = "OutOfmemory"
	}
	return Result{Reason: reason, Message: fmt.Sprintf("Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
		e.name, e.requested, e.used, e.allocated)}
}

// fit is the scheduler's noderesources fitsRequest as the kubelet's
// predicate admission runs it: the pod count first, then cpu, memory,
// ephemeral storage and scalar resources, each against allocatable minus
// what the other pods request. Extended resources the node does not know
// are ignored (removeMissingExtendedResources).
func fit(pod *v1.Pod, others []*v1.Pod, allocatable v1.ResourceList) Result {
	if allocatable == nil {
		return Result{Admit: true}
	}
	if q, ok := allocatable[v1.ResourcePods]; ok && int64(len(others))+1 > q.Value() {
		return insufficient{v1.ResourcePods, 1, int64(len(others)), q.Value()}.result()
	}
	req := podRequests(pod)
	used := v1.ResourceList{}
	for _, o := range others {
		for name, q := range podRequests(o) {
			sum := used[name]
			sum.Add(q)
			used[name] = sum
		}
	}
	for _, name := range checkOrder(req) {
		q := req[name]
		if q.Sign() <= 0 {
			continue
		}
		alloc, known := allocatable[name]
		if !known && isExtended(name) {
			continue
		}
		r, u, a := value(name, q), value(name, used[name]), value(name, alloc)
		if r > a-u {
			return insufficient{name, r, u, a}.result()
		}
	}
	return Result{Admit: true}
}

// podRequests are the pod's effective requests: the larger of its init
// containers' and the sum of the others, pod-level resources and overhead.
func podRequests(pod *v1.Pod) v1.ResourceList {
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}

// checkOrder is the order fitsRequest reports in: cpu, memory,
// ephemeral-storage, then the rest by name (a map has no order).
func checkOrder(req v1.ResourceList) []v1.ResourceName {
	out := []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage}
	var rest []v1.ResourceName
	for name := range req {
		switch name {
		case v1.ResourceCPU, v1.ResourceMemory, v1.ResourceEphemeralStorage, v1.ResourcePods:
		default:
			rest = append(rest, name)
		}
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i] < rest[j] })
	return append(out, rest...)
}

func value(name v1.ResourceName, q resource.Quantity) int64 {
	if name == v1.ResourceCPU {
		return q.MilliValue()
	}
	return q.Value()
}

// isExtended is v1helper.IsExtendedResourceName: a resource outside the
// kubernetes.io/ domain, not a requests. prefix.
func isExtended(name v1.ResourceName) bool {
	s := string(name)
	native := !strings.Contains(s, "/") || strings.Contains(s, v1.ResourceDefaultNamespacePrefix)
	return !native && !strings.HasPrefix(s, v1.DefaultResourceRequestsPrefix)
}
