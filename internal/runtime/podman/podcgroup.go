package podman

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/runlet/runlet/internal/runtime"
)

// cgroupRoot is where the host's cgroup hierarchies are mounted.
var cgroupRoot = "/sys/fs/cgroup"

// UpdateSandboxResources implements runtime.Runtime. podman 4 cannot change
// a pod's cgroup once made (pod update came with podman 5), so its files
// are written here, as the kubelet's pod cgroup manager writes its own.
func (b *Backend) UpdateSandboxResources(ctx context.Context, id string, r runtime.Resources) error {
	if b.host.Remote {
		return fmt.Errorf("the pod cgroup of sandbox %s is on another host", shortID(id))
	}
	ip, err := b.client.InspectPod(ctx, id)
	if err != nil {
		return wrapf(err, "inspecting sandbox %s", shortID(id))
	}
	if ip.CgroupPath == "" {
		return fmt.Errorf("sandbox %s has no cgroup of its own", shortID(id))
	}
	if b.cg.v2 {
		return writeV2(filepath.Join(cgroupRoot, ip.CgroupPath), r)
	}
	return writeV1(ip.CgroupPath, r, b.cg.swapLimit)
}

// writeV1 sets cpu and memory; the memory+swap limit is moved in the order
// the kernel accepts (it may never be below the memory limit).
func writeV1(path string, r runtime.Resources, swap bool) error {
	cpu, mem := filepath.Join(cgroupRoot, "cpu", path), filepath.Join(cgroupRoot, "memory", path)
	quota := int64(unlimited)
	if r.CPUMillis > 0 {
		quota = milliCPUToQuota(r.CPUMillis)
	}
	files := [][2]string{
		{filepath.Join(cpu, "cpu.shares"), strconv.FormatUint(max(r.CPUShares, 2), 10)},
		{filepath.Join(cpu, "cpu.cfs_period_us"), strconv.Itoa(cfsPeriod)},
		{filepath.Join(cpu, "cpu.cfs_quota_us"), strconv.FormatInt(quota, 10)},
	}
	limit := int64(unlimited)
	if r.MemoryBytes > 0 {
		limit = r.MemoryBytes
	}
	memFiles := [][2]string{{filepath.Join(mem, "memory.limit_in_bytes"), strconv.FormatInt(limit, 10)}}
	if swap {
		sw := [2]string{filepath.Join(mem, "memory.memsw.limit_in_bytes"), strconv.FormatInt(limit, 10)}
		if raising(filepath.Join(mem, "memory.limit_in_bytes"), limit) {
			memFiles = append([][2]string{sw}, memFiles...)
		} else {
			memFiles = append(memFiles, sw)
		}
	}
	return writeAll(append(files, memFiles...))
}

func writeV2(dir string, r runtime.Resources) error {
	weight := 1 + ((max(r.CPUShares, 2)-2)*9999)/262142
	cpuMax := "max " + strconv.Itoa(cfsPeriod)
	if r.CPUMillis > 0 {
		cpuMax = strconv.FormatInt(milliCPUToQuota(r.CPUMillis), 10) + " " + strconv.Itoa(cfsPeriod)
	}
	memMax := "max"
	if r.MemoryBytes > 0 {
		memMax = strconv.FormatInt(r.MemoryBytes, 10)
	}
	return writeAll([][2]string{
		{filepath.Join(dir, "cpu.weight"), strconv.FormatUint(weight, 10)},
		{filepath.Join(dir, "cpu.max"), cpuMax},
		{filepath.Join(dir, "memory.max"), memMax},
	})
}

// raising reports whether limit is above what the file holds now.
func raising(file string, limit int64) bool {
	b, err := os.ReadFile(file)
	if err != nil {
		return true
	}
	cur, err := strconv.ParseInt(string(trimNL(b)), 10, 64)
	return err != nil || limit == unlimited || limit > cur
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	return b
}

func writeAll(files [][2]string) error {
	for _, f := range files {
		if err := os.WriteFile(f[0], []byte(f[1]), 0o644); err != nil {
			return fmt.Errorf("setting the pod cgroup: %w", err)
		}
	}
	return nil
}
