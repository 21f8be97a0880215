package kuberuntime

import (
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
)

// minMilliCPULimit is the kubelet's least CPU limit a quota stands for.
const minMilliCPULimit = 1

// PodInForce are the pod's resources (its allocated version) as its cgroup
// holds them, read back from the settings last applied as the kubelet's
// convertToAPIPodLevelResourcesStatus reads the cgroup: the CPU request
// from the shares (the allocated one where the shares are its), the CPU
// limit from the quota, the memory limit as set. A value at the cgroup's
// floor, or a limit not set, leaves what the pod asks for.
func (m *Manager) PodInForce(pod *v1.Pod) *v1.ResourceRequirements {
	cg := m.PodCgroup(pod)
	out := &v1.ResourceRequirements{}
	if pod.Spec.Resources != nil {
		out = pod.Spec.Resources.DeepCopy()
	}
	if out.Requests == nil {
		out.Requests = v1.ResourceList{}
	}
	if out.Limits == nil {
		out.Limits = v1.ResourceList{}
	}
	allocated := out.Requests.Cpu().MilliValue()
	if cpu := sharesToMilliCPU(cg.CPUShares); (cpu > minShares || allocated > minShares) && cg.CPUShares != milliCPUToShares(allocated) {
		out.Requests[v1.ResourceCPU] = *resource.NewMilliQuantity(cpu, resource.DecimalSI)
	}
	if _, ok := out.Requests[v1.ResourceMemory]; !ok {
		if q, ok := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})[v1.ResourceMemory]; ok {
			out.Requests[v1.ResourceMemory] = q
		}
	}
	if cg.CPUMillis > minMilliCPULimit || (cg.CPUMillis > 0 && out.Limits.Cpu().MilliValue() > minMilliCPULimit) {
		out.Limits[v1.ResourceCPU] = *resource.NewMilliQuantity(cg.CPUMillis, resource.DecimalSI)
	}
	if cg.MemoryBytes > 0 {
		out.Limits[v1.ResourceMemory] = *resource.NewQuantity(cg.MemoryBytes, resource.BinarySI)
	}
	return out
}

// sharesToMilliCPU is the kubelet's SharesToMilliCPU.
func sharesToMilliCPU(shares uint64) int64 {
	if shares < minShares {
		return 0
	}
	return int64(math.Ceil(float64(shares*milliCPUToCPU) / sharesPerCPU))
}
