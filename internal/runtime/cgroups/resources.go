package cgroups

import (
	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/runlet/runlet/internal/runtime"
)

// Unlimited lifts a limit in an update: the OCI runtimes write -1 (v1) or
// "max" (v2) for it.
const Unlimited = -1

// minShares is the kernel's least cpu.shares, the kubelet's MinShares.
const minShares = 2

// Resources maps cgroup limits as the kubelet's CRI runtimes apply them: a
// memory limit allows no swap on top where the host can say so, and on
// cgroup v2 an OOM kill takes the whole container (memory.oom.group), as the
// kubelet asks by default. container is false for the pod's cgroup. Nil:
// nothing to limit, so the runtime's defaults stay.
func Resources(r runtime.Resources, h Host, container bool) *specs.LinuxResources {
	lr := &specs.LinuxResources{Memory: memory(r.MemoryBytes, h), CPU: cpu(r)}
	if r.PidsLimit > 0 {
		limit := r.PidsLimit
		lr.Pids = &specs.LinuxPids{Limit: &limit}
	}
	if container && h.V2 {
		lr.Unified = map[string]string{"memory.oom.group": "1"}
	}
	if lr.Memory == nil && lr.CPU == nil && lr.Pids == nil && lr.Unified == nil {
		return nil
	}
	return lr
}

// memory is a memory limit with, where the host can set it, the same
// memory+swap limit: no swap on top.
func memory(limit int64, h Host) *specs.LinuxMemory {
	if limit <= 0 {
		return nil
	}
	m := &specs.LinuxMemory{Limit: &limit}
	if h.SwapLimit {
		swap := limit
		m.Swap = &swap
	}
	return m
}

func cpu(r runtime.Resources) *specs.LinuxCPU {
	if r.CPUMillis <= 0 && r.CPUShares == 0 {
		return nil
	}
	c := &specs.LinuxCPU{}
	if r.CPUShares > 0 {
		shares := r.CPUShares
		c.Shares = &shares
	}
	if r.CPUMillis > 0 {
		quota, period := MilliCPUToQuota(r.CPUMillis), uint64(CFSPeriod)
		c.Quota, c.Period = &quota, &period
	}
	return c
}

// UpdateResources are a running container's or pod's new CPU and memory
// settings. Each is stated, so that a limit no longer asked for is lifted
// (Unlimited) and shares no longer asked for fall to the least: an update
// leaves alone what it does not mention. The memory+swap limit follows the
// memory limit, as at creation.
func UpdateResources(r runtime.Resources, h Host) *specs.LinuxResources {
	limit, quota := int64(Unlimited), int64(Unlimited)
	if r.MemoryBytes > 0 {
		limit = r.MemoryBytes
	}
	if r.CPUMillis > 0 {
		quota = MilliCPUToQuota(r.CPUMillis)
	}
	period, shares := uint64(CFSPeriod), max(r.CPUShares, minShares)
	lr := &specs.LinuxResources{
		Memory: &specs.LinuxMemory{Limit: &limit},
		CPU:    &specs.LinuxCPU{Shares: &shares, Quota: &quota, Period: &period},
	}
	if h.SwapLimit {
		swap := limit
		lr.Memory.Swap = &swap
	}
	return lr
}
