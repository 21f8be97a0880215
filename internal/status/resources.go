package status

import (
	v1 "k8s.io/api/core/v1"
)

// resizable are the resources a running container can change in place.
var resizable = []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory}

// setResources reports a container's allocated requests and, in
// status.resources, what is in force: for a running container the CPU and
// memory settings last applied to it, else its allocation, as the kubelet
// reports them since in-place resize.
func (in Input) setResources(cs *v1.ContainerStatus, spec *v1.Container, running bool) {
	cs.AllocatedResources = spec.Resources.Requests.DeepCopy()
	var applied *v1.ResourceRequirements
	if running && in.Actuated != nil {
		if r, ok := in.Actuated(spec.Name); ok {
			applied = &r
		}
	}
	cs.Resources = inForce(spec.Resources, applied)
}

func inForce(allocated v1.ResourceRequirements, applied *v1.ResourceRequirements) *v1.ResourceRequirements {
	out := allocated.DeepCopy()
	if applied == nil {
		return out
	}
	for _, name := range resizable {
		copyQuantity(&out.Requests, applied.Requests, name)
		copyQuantity(&out.Limits, applied.Limits, name)
	}
	if len(out.Requests) == 0 {
		out.Requests = nil
	}
	if len(out.Limits) == 0 {
		out.Limits = nil
	}
	return out
}

func copyQuantity(dst *v1.ResourceList, src v1.ResourceList, name v1.ResourceName) {
	q, ok := src[name]
	switch {
	case ok && *dst == nil:
		*dst = v1.ResourceList{name: q.DeepCopy()}
	case ok:
		(*dst)[name] = q.DeepCopy()
	case *dst != nil:
		delete(*dst, name)
	}
}
