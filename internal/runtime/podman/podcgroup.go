package podman

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
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
	// The settings a container update would state, written as files.
	lr := b.updateResources(r)
	if b.cg.v2 {
		return writeV2(filepath.Join(cgroupRoot, ip.CgroupPath), lr)
	}
	return writeV1(ip.CgroupPath, lr)
}

// writeV1 sets cpu and memory; the memory+swap limit is moved in the order
// the kernel accepts (it may never be below the memory limit).
func writeV1(path string, lr *libpod.LinuxResources) error {
	cpu, mem := filepath.Join(cgroupRoot, "cpu", path), filepath.Join(cgroupRoot, "memory", path)
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
	return writeAll(append(files, memFiles...))
}

func writeV2(dir string, lr *libpod.LinuxResources) error {
	weight := 1 + ((*lr.CPU.Shares-2)*9999)/262142
	period := strconv.FormatUint(*lr.CPU.Period, 10)
	cpuMax, memMax := "max "+period, "max"
	if q := *lr.CPU.Quota; q != unlimited {
		cpuMax = strconv.FormatInt(q, 10) + " " + period
	}
	if l := *lr.Memory.Limit; l != unlimited {
		memMax = strconv.FormatInt(l, 10)
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
	cur, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return err != nil || limit == unlimited || limit > cur
}

func writeAll(files [][2]string) error {
	for _, f := range files {
		if err := os.WriteFile(f[0], []byte(f[1]), 0o644); err != nil {
			return fmt.Errorf("setting the pod cgroup: %w", err)
		}
	}
	return nil
}
