package cgroups

// The kubelet's CFS constants: a 100 ms period, and at least 1 ms of quota
// (the kernel's minimum; podman refuses less).
const (
	CFSPeriod   = 100000
	MinCFSQuota = 1000
)

// MilliCPUToQuota is the kubelet's MilliCPUToQuota for a CFSPeriod period,
// capped where the product would overflow.
func MilliCPUToQuota(milliCPU int64) int64 {
	const maxMilliCPU = (1<<63 - 1) / CFSPeriod
	quota := min(milliCPU, maxMilliCPU) * CFSPeriod / 1000
	return max(quota, MinCFSQuota)
}

// sharesToWeight is cpu.shares [2, 262144] as cgroup v2's cpu.weight
// [1, 10000], by the formula runc, crun and the kubelet share, so that a
// pod cgroup written here weighs what its runtime would make it.
func sharesToWeight(shares uint64) uint64 {
	return 1 + ((shares-2)*9999)/262142
}
