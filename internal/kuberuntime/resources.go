package kuberuntime

import (
	"github.com/runlet/runlet/internal/qos"
	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// The kernel's and the kubelet's CFS constants (pkg/kubelet/cm).
const (
	minShares     = 2
	maxShares     = 262144
	sharesPerCPU  = 1024
	milliCPUToCPU = 1000
)

// milliCPUToShares is the kubelet's MilliCPUToShares: no request gets the
// kernel's minimum of 2 shares, not the default 1024.
func milliCPUToShares(milliCPU int64) uint64 {
	if milliCPU <= 0 {
		return minShares
	}
	// Conceptually (milliCPU / milliCPUToCPU) * sharesPerCPU, but factored to
	// improve rounding; the cap first keeps the product from overflowing.
	if milliCPU > maxShares*milliCPUToCPU/sharesPerCPU {
		return maxShares
	}
	shares := (milliCPU * sharesPerCPU) / milliCPUToCPU
	if shares < minShares {
		return minShares
	}
	return uint64(shares)
}

// containerResources are the container's cgroup settings as the kubelet's
// generateLinuxContainerResources makes them: shares from the CPU request
// (the limit when only that is set), a CFS quota from the CPU limit, the
// memory limit (the pod-level one when the container has none), and the
// oom_score_adj of its QoS class.
func containerResources(pod *v1.Pod, c *v1.Container, node NodeOptions) runtime.Resources {
	var r runtime.Resources
	cpuLimit, memLimit := containerLimit(pod, c, v1.ResourceCPU), containerLimit(pod, c, v1.ResourceMemory)
	if req, ok := c.Resources.Requests[v1.ResourceCPU]; ok {
		r.CPUShares = milliCPUToShares(req.MilliValue())
	} else {
		r.CPUShares = milliCPUToShares(cpuLimit.MilliValue())
	}
	r.CPUMillis = max(cpuLimit.MilliValue(), 0)
	r.MemoryBytes = max(memLimit.Value(), 0)
	adj := qos.GetContainerOOMScoreAdjust(pod, c, node.MemoryCapacity)
	r.OOMScoreAdj = &adj
	return r
}

// containerLimit is the container's limit, else the pod-level one.
func containerLimit(pod *v1.Pod, c *v1.Container, name v1.ResourceName) resource.Quantity {
	q := c.Resources.Limits[name]
	if q.IsZero() && pod.Spec.Resources != nil && resourcehelper.IsPodLevelResourcesSet(pod) {
		return pod.Spec.Resources.Limits[name]
	}
	return q
}

// podResources are the pod cgroup's settings as the kubelet's
// ResourceConfigForPod makes them: shares from the summed requests, and a
// CPU quota or memory limit only when every container declares one (or the
// pod does) and the QoS class is not BestEffort; the pids limit is
// --pod-max-pids.
func podResources(pod *v1.Pod, node NodeOptions) runtime.Resources {
	reqs := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	limits := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})
	cpuDeclared, memDeclared := true, true
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			cpuDeclared = cpuDeclared && !list[i].Resources.Limits.Cpu().IsZero()
			memDeclared = memDeclared && !list[i].Resources.Limits.Memory().IsZero()
		}
	}
	if pod.Spec.Resources != nil && resourcehelper.IsPodLevelResourcesSet(pod) {
		cpuDeclared = cpuDeclared || !pod.Spec.Resources.Limits.Cpu().IsZero()
		memDeclared = memDeclared || !pod.Spec.Resources.Limits.Memory().IsZero()
	}
	var r runtime.Resources
	if node.PodPidsLimit > 0 {
		r.PidsLimit = node.PodPidsLimit
	}
	class := qos.GetPodQOS(pod)
	if class == v1.PodQOSBestEffort {
		r.CPUShares = minShares
		return r
	}
	r.CPUShares = milliCPUToShares(reqs.Cpu().MilliValue())
	if class == v1.PodQOSGuaranteed || cpuDeclared {
		r.CPUMillis = max(limits.Cpu().MilliValue(), 0)
	}
	if class == v1.PodQOSGuaranteed || memDeclared {
		r.MemoryBytes = max(limits.Memory().Value(), 0)
	}
	return r
}
