package cgroups

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
)

// WritePod writes an update in UpdateResources' form (every CPU and memory
// limit stated) into a pod's cgroup, as the kubelet's pod cgroup manager
// writes its own: for a backend whose runtime cannot change a pod's cgroup
// once made (podman 4). path is the cgroup's path below each hierarchy, as
// /proc/<pid>/cgroup gives it; root is where the hierarchies are (Root).
func WritePod(root, path string, h Host, lr *specs.LinuxResources) error {
	if !stated(lr) {
		return errors.New("setting the pod cgroup: an update must state cpu shares, quota and period and the memory limit")
	}
	if h.V2 {
		return writeAll(v2Files(filepath.Join(root, path), lr))
	}
	return writeAll(v1Files(root, path, lr))
}

func stated(lr *specs.LinuxResources) bool {
	return lr != nil && lr.CPU != nil && lr.Memory != nil && lr.Memory.Limit != nil &&
		lr.CPU.Shares != nil && lr.CPU.Quota != nil && lr.CPU.Period != nil
}

// v1Files set cpu and memory; the memory+swap limit is moved in the order
// the kernel accepts, as it may never be below the memory limit: first
// when raising, last when lowering.
func v1Files(root, path string, lr *specs.LinuxResources) [][2]string {
	cpu, mem := filepath.Join(root, "cpu", path), filepath.Join(root, "memory", path)
	files := [][2]string{
		{filepath.Join(cpu, "cpu.shares"), strconv.FormatUint(*lr.CPU.Shares, 10)},
		{filepath.Join(cpu, "cpu.cfs_period_us"), strconv.FormatUint(*lr.CPU.Period, 10)},
		{filepath.Join(cpu, "cpu.cfs_quota_us"), strconv.FormatInt(*lr.CPU.Quota, 10)},
	}
	limit := *lr.Memory.Limit
	limitFile := filepath.Join(mem, "memory.limit_in_bytes")
	memFiles := [][2]string{{limitFile, strconv.FormatInt(limit, 10)}}
	if lr.Memory.Swap != nil {
		sw := [2]string{filepath.Join(mem, "memory.memsw.limit_in_bytes"), strconv.FormatInt(*lr.Memory.Swap, 10)}
		if raising(limitFile, limit) {
			memFiles = append([][2]string{sw}, memFiles...)
		} else {
			memFiles = append(memFiles, sw)
		}
	}
	return append(files, memFiles...)
}

// v2Files set cpu.weight, cpu.max and memory.max in dir; Unlimited is
// v2's "max".
func v2Files(dir string, lr *specs.LinuxResources) [][2]string {
	period := strconv.FormatUint(*lr.CPU.Period, 10)
	cpuMax, memMax := "max "+period, "max"
	if q := *lr.CPU.Quota; q != Unlimited {
		cpuMax = strconv.FormatInt(q, 10) + " " + period
	}
	if l := *lr.Memory.Limit; l != Unlimited {
		memMax = strconv.FormatInt(l, 10)
	}
	return [][2]string{
		{filepath.Join(dir, "cpu.weight"), strconv.FormatUint(sharesToWeight(*lr.CPU.Shares), 10)},
		{filepath.Join(dir, "cpu.max"), cpuMax},
		{filepath.Join(dir, "memory.max"), memMax},
	}
}

// raising reports whether limit is above what the file holds now.
func raising(file string, limit int64) bool {
	b, err := os.ReadFile(file)
	if err != nil {
		return true
	}
	cur, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return err != nil || limit == Unlimited || limit > cur
}

func writeAll(files [][2]string) error {
	for _, f := range files {
		if err := os.WriteFile(f[0], []byte(f[1]), 0o644); err != nil {
			return fmt.Errorf("setting the pod cgroup: %w", err)
		}
	}
	return nil
}
