package podman

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
)

// The kubelet's CFS constants: a 100 ms period, and at least 1 ms of quota
// (the kernel's minimum).
const (
	cfsPeriod   = 100000
	minCFSQuota = 1000
)

// cgroupHost is what the host's cgroups offer beyond podman's defaults.
type cgroupHost struct {
	v2 bool
	// swapLimit: the memory+swap limit can be set (v1 memory.memsw.*, v2
	// memory.swap.max), so a limit can mean no swap, as on the kubelet.
	swapLimit bool
}

// detectCgroups looks at the local cgroup tree; with podman on another host
// nothing is detected and podman's defaults stay.
func detectCgroups(version string) cgroupHost {
	h := cgroupHost{v2: version == "v2"}
	if h.v2 {
		h.swapLimit = ownV2File("memory.swap.max")
	} else {
		_, err := os.Stat("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes")
		h.swapLimit = err == nil
	}
	return h
}

// ownV2File reports whether runlet's own v2 cgroup has the file (the root
// cgroup has no memory.* files).
func ownV2File(name string) bool {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if path, ok := strings.CutPrefix(line, "0::"); ok {
			_, err := os.Stat(filepath.Join("/sys/fs/cgroup", path, name))
			return err == nil
		}
	}
	return false
}

// resources maps cgroup limits as the kubelet's CRI runtimes apply them: a
// memory limit allows no swap on top, and on cgroup v2 an OOM kill takes
// the whole container (memory.oom.group), as the kubelet asks by default.
func (b *Backend) resources(r runtime.Resources, container bool) *libpod.LinuxResources {
	lr := &libpod.LinuxResources{}
	if r.MemoryBytes > 0 {
		limit := r.MemoryBytes
		lr.Memory = &libpod.LinuxMemory{Limit: &limit}
		if b.cg.swapLimit {
			lr.Memory.Swap = &limit
		}
	}
	if r.CPUMillis > 0 || r.CPUShares > 0 {
		lr.CPU = &libpod.LinuxCPU{}
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
		lr.Pids = &libpod.LinuxPids{Limit: r.PidsLimit}
	}
	if container && b.cg.v2 {
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

// oomScoreAdj is the container's oom_score_adj. Lowering it below the
// service's own needs CAP_SYS_RESOURCE (the create fails without), so
// without that capability a Guaranteed container gets the service's value,
// the lowest it may have.
func (b *Backend) oomScoreAdj(adj *int) *int {
	if adj == nil {
		return nil
	}
	v := *adj
	if !b.limits.CapSysResource && v < b.limits.OOMScoreAdj {
		v = b.limits.OOMScoreAdj
	}
	return &v
}

// unlimited lifts a cgroup limit in an update (the OCI runtimes write -1).
const unlimited = -1

// updateResources are a running container's new CPU and memory settings,
// each stated, so that a limit the pod no longer asks for is lifted; the
// memory+swap limit follows the memory limit, as at creation.
func (b *Backend) updateResources(r runtime.Resources) *libpod.LinuxResources {
	limit, quota := int64(unlimited), int64(unlimited)
	if r.MemoryBytes > 0 {
		limit = r.MemoryBytes
	}
	if r.CPUMillis > 0 {
		quota = milliCPUToQuota(r.CPUMillis)
	}
	period, shares := uint64(cfsPeriod), max(r.CPUShares, 2)
	lr := &libpod.LinuxResources{Memory: &libpod.LinuxMemory{Limit: &limit}, CPU: &libpod.LinuxCPU{Shares: &shares, Quota: &quota, Period: &period}}
	if b.cg.swapLimit {
		swap := limit
		lr.Memory.Swap = &swap
	}
	return lr
}
