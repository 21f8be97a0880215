package runc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/cgroups"
	"github.com/runlet/runlet/internal/runtime/hostproc"
)

// Stats reads the containers' cgroups and network counters.
func (b *Backend) Stats(_ context.Context, ids []string) ([]runtime.ContainerStats, error) {
	out := make([]runtime.ContainerStats, 0, len(ids))
	for _, id := range ids {
		rec, err := b.readContainer(id)
		if err != nil || !rec.Init.Alive() {
			continue
		}
		st := runtime.ContainerStats{ID: id, Time: time.Now()}
		if b.host.Cgroups.V2 {
			readV2(&st, filepath.Join(cgroups.Root, rec.CgroupPath))
		} else {
			readV1(&st, rec.CgroupPath)
		}
		st.NetRxBytes, st.NetTxBytes = netCounters(rec.Init.PID)
		if st.MemoryLimitBytes == 0 {
			// No limit of its own: the host's memory bounds it, as podman reports.
			st.MemoryLimitBytes = uint64(b.info.MemoryBytes)
		}
		out = append(out, st)
	}
	return out, nil
}

func readV1(st *runtime.ContainerStats, path string) {
	at := func(ctrl, file string) string { return filepath.Join(cgroups.Root, ctrl, path, file) }
	st.CPUNanos = readUint(at("cpuacct", "cpuacct.usage"))
	st.MemoryUsageBytes = readUint(at("memory", "memory.usage_in_bytes"))
	inactive := statValue(at("memory", "memory.stat"), "total_inactive_file")
	st.MemoryWorkingSet = st.MemoryUsageBytes - min(inactive, st.MemoryUsageBytes)
	if l := readUint(at("memory", "memory.limit_in_bytes")); l < 1<<62 {
		st.MemoryLimitBytes = l
	}
	st.ProcessCount = readUint(at("pids", "pids.current"))
}

func readV2(st *runtime.ContainerStats, dir string) {
	st.CPUNanos = statValue(filepath.Join(dir, "cpu.stat"), "usage_usec") * 1000
	st.MemoryUsageBytes = readUint(filepath.Join(dir, "memory.current"))
	inactive := statValue(filepath.Join(dir, "memory.stat"), "inactive_file")
	st.MemoryWorkingSet = st.MemoryUsageBytes - min(inactive, st.MemoryUsageBytes)
	st.MemoryLimitBytes = readUint(filepath.Join(dir, "memory.max")) // "max" reads as 0: no limit
	st.ProcessCount = readUint(filepath.Join(dir, "pids.current"))
}

func readUint(path string) uint64 {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	v, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return v
}

// statValue is one "key value" line of a cgroup stat file; 0 if absent.
func statValue(path, key string) uint64 {
	kv, _ := hostproc.KeyValues(path)
	return kv[key]
}

// netCounters sums the pod's interfaces but loopback, as the process sees
// them.
func netCounters(pid int) (rx, tx uint64) {
	devs, _ := hostproc.NetDevs(fmt.Sprintf("/proc/%d/net/dev", pid))
	for _, d := range devs {
		if d.Name != "lo" {
			rx, tx = rx+d.RxBytes, tx+d.TxBytes
		}
	}
	return rx, tx
}
