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

// copyQuantity sets what is in force of the container's requests or limits,
// as the kubelet reads them back: only in a list the container declares, so
// that a container without limits of its own shows none, not the pod-level
// ones its cgroup holds.
func copyQuantity(dst *v1.ResourceList, src v1.ResourceList, name v1.ResourceName) {
	if *dst == nil {
		return
	}
	if q, ok := src[name]; ok {
		(*dst)[name] = q.DeepCopy()
	} else {
		delete(*dst, name)
	}
}
