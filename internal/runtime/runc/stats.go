package runc

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/cgroups"
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

// statValue is one "key value" line of a cgroup stat file.
func statValue(path, key string) uint64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), " "); ok && k == key {
			n, _ := strconv.ParseUint(v, 10, 64)
			return n
		}
	}
	return 0
}

// netCounters sums the pod's interfaces but loopback, as the process sees
// them.
func netCounters(pid int) (rx, tx uint64) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/net/dev", pid))
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		name, rest, ok := strings.Cut(s.Text(), ":")
		if !ok || strings.TrimSpace(name) == "lo" {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) < 9 {
			continue
		}
		r, _ := strconv.ParseUint(fields[0], 10, 64)
		t, _ := strconv.ParseUint(fields[8], 10, 64)
		rx, tx = rx+r, tx+t
	}
	return rx, tx
}
