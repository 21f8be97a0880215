package ocispec

import (
	"slices"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/runlet/runlet/internal/runtime"
)

// The kubelet's CFS constants: a 100 ms period, and at least 1 ms of quota
// (the kernel's minimum).
const (
	cfsPeriod   = 100000
	minCFSQuota = 1000
)

// setResources sets the container's cgroup: its limits, and its devices.
func setResources(s *specs.Spec, in Input) error {
	r := Resources(in.Container.Resources, in.Host, true)
	if r == nil {
		r = &specs.LinuxResources{}
	}
	r.Devices = deviceRules(in.Container.Security.Privileged)
	if in.Container.Security.Privileged {
		s.Linux.Devices = slices.Clone(in.Host.Devices)
	}
	s.Linux.Resources = r
	return nil
}

// deviceRules deny every device but those runc allows every container
// (null, zero, full, tty, random, urandom, ptmx, pts), which runc appends;
// a privileged container may use all of them, as on containerd.
func deviceRules(privileged bool) []specs.LinuxDeviceCgroup {
	return []specs.LinuxDeviceCgroup{{Allow: privileged, Access: "rwm"}}
}

// Resources maps cgroup limits as the kubelet's CRI runtimes and the
// podman backend apply them: a memory limit allows no swap on top where
// the host can say so, and on cgroup v2 an OOM kill takes the whole
// container (memory.oom.group), as the kubelet asks by default. container
// is false for the pod's cgroup. Nil: nothing to limit.
func Resources(r runtime.Resources, h Host, container bool) *specs.LinuxResources {
	lr := &specs.LinuxResources{}
	if r.MemoryBytes > 0 {
		limit := r.MemoryBytes
		lr.Memory = &specs.LinuxMemory{Limit: &limit}
		if h.SwapLimit {
			swap := limit
			lr.Memory.Swap = &swap
		}
	}
	if r.CPUMillis > 0 || r.CPUShares > 0 {
		lr.CPU = &specs.LinuxCPU{}
		if r.CPUShares > 0 {
			shares := r.CPUShares
			lr.CPU.Shares = &shares
		}
		if r.CPUMillis > 0 {
			quota, period := milliCPUToQuota(r.CPUMillis), uint64(cfsPeriod)
			lr.CPU.Quota, lr.CPU.Period = &quota, &period
		}
	}
	if r.PidsLimit > 0 {
		limit := r.PidsLimit
		lr.Pids = &specs.LinuxPids{Limit: &limit}
	}
	if container && h.CgroupV2 {
		lr.Unified = map[string]string{"memory.oom.group": "1"}
	}
	if lr.Memory == nil && lr.CPU == nil && lr.Pids == nil && lr.Unified == nil {
		return nil
	}
	return lr
}

// milliCPUToQuota is the kubelet's MilliCPUToQuota for a 100 ms period.
func milliCPUToQuota(milliCPU int64) int64 {
	const maxMilliCPU = (1<<63 - 1) / cfsPeriod
	quota := min(milliCPU, maxMilliCPU) * cfsPeriod / 1000
	return max(quota, minCFSQuota)
}
