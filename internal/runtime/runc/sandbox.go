package runc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/opencontainers/selinux/go-selinux/label"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/cgroups"
	"github.com/runlet/runlet/internal/runtime/runc/pause"
	"github.com/runlet/runlet/internal/unmount"
	"golang.org/x/sys/unix"
)

// shmSize is the pod's /dev/shm, as the CRI runtimes size it.
const shmSize = "65536k"

// CreateSandbox starts the pod's pause process, mounts its /dev/shm and
// makes its cgroup.
func (b *Backend) CreateSandbox(ctx context.Context, cfg runtime.SandboxConfig) (runtime.Sandbox, error) {
	rec := &sandboxRecord{ID: newID(), Config: cfg, CreatedAt: time.Now(),
		CgroupParent: "/runlet/pod" + strings.ReplaceAll(cfg.PodUID, "-", "_")}
	dir := b.sandboxDir(rec.ID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return runtime.Sandbox{}, err
	}
	b.index.addSandbox(cfg.PodUID, rec.ID)
	if err := b.setUpSandbox(ctx, rec, dir); err != nil {
		b.tearDownSandbox(rec, dir)
		return runtime.Sandbox{}, fmt.Errorf("pod %s/%s: %w: %w", cfg.Namespace, cfg.Name, runtime.ErrSandboxStart, err)
	}
	b.events.send(runtime.Event{PodUID: cfg.PodUID, Action: "sandbox-create", Time: rec.CreatedAt})
	return b.sandboxOf(rec), nil
}

func (b *Backend) setUpSandbox(ctx context.Context, rec *sandboxRecord, dir string) error {
	cfg := rec.Config
	if err := b.makePodCgroup(rec.CgroupParent, cfg.Resources); err != nil {
		return err
	}
	var err error
	if rec.SELinux, err = podLabels(b.sel); err != nil {
		return err
	}
	if !cfg.HostIPC {
		rec.Shm = filepath.Join(dir, "shm")
		if err := os.MkdirAll(rec.Shm, 0o755); err != nil {
			return err
		}
		data := label.FormatMountLabel("mode=1777,size="+shmSize, rec.SELinux.Mount)
		if err := unix.Mount("shm", rec.Shm, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, data); err != nil {
			return fmt.Errorf("mounting the pod's /dev/shm: %w", err)
		}
	}
	// A pod in a user namespace of its own makes its network namespace in
	// it, which the core then wires (cfg.NetNS is only where it will be).
	ownNet := (cfg.NetNS == "" || cfg.UserNS != nil) && !cfg.HostNetwork
	ns := pause.Namespaces{Net: ownNet, IPC: !cfg.HostIPC, UTS: !cfg.HostNetwork, PID: !cfg.HostPID}
	hostname := cfg.Hostname
	if !ns.UTS {
		hostname = ""
	}
	p, err := pause.Start(pause.Config{Namespaces: ns, Hostname: hostname, CgroupProcs: b.podCgroupProcs(rec.CgroupParent), UserNS: cfg.UserNS})
	if err != nil {
		return err
	}
	rec.Pause = p
	if cfg.UserNS != nil && cfg.AttachNetwork != nil {
		// The pod network, in the namespace the pause process made inside
		// the pod's user namespace.
		if rec.Config.IPs, err = cfg.AttachNetwork(ctx, p.NS("net")); err != nil {
			return err
		}
	}
	return writeJSON(filepath.Join(dir, sandboxFile), rec)
}

// makePodCgroup makes the pod's cgroup with its limits: the kubelet's pod
// cgroup, which its containers' cgroups are below.
func (b *Backend) makePodCgroup(parent string, r runtime.Resources) error {
	if r.CPUMillis != 0 || r.MemoryBytes != 0 || r.CPUShares != 0 {
		if err := b.ensurePodCgroup(parent); err != nil {
			return err
		}
		if err := cgroups.WritePod(cgroups.Root, parent, b.host.Cgroups, cgroups.UpdateResources(r, b.host.Cgroups)); err != nil {
			return err
		}
	}
	if r.PidsLimit <= 0 {
		return nil
	}
	dir := filepath.Join(cgroups.Root, "pids", parent)
	if b.host.Cgroups.V2 {
		dir = filepath.Join(cgroups.Root, parent)
		enableControllers(parent)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("making the pod cgroup: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.FormatInt(r.PidsLimit, 10)), 0o644); err != nil {
		return fmt.Errorf("setting the pod's process limit: %w", err)
	}
	return nil
}

// podCgroupProcs are the cgroup.procs files of the pod's cgroup where it
// has one: the CPU and memory hierarchies (cgroup v1), or its one cgroup
// (v2). The pause process joins them, as the kubelet's pause container
// runs in the pod cgroup; on v1 it stays out of the pids hierarchy, whose
// limit counts its runtime's threads where the kubelet's pause has one.
func (b *Backend) podCgroupProcs(parent string) []string {
	dirs := []string{filepath.Join(cgroups.Root, parent)}
	if !b.host.Cgroups.V2 {
		dirs = []string{filepath.Join(cgroups.Root, "cpu", parent), filepath.Join(cgroups.Root, "memory", parent)}
	}
	var out []string
	for _, d := range dirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			out = append(out, filepath.Join(d, "cgroup.procs"))
		}
	}
	return out
}

// ensurePodCgroup makes the pod cgroup in the hierarchies its limits are in.
func (b *Backend) ensurePodCgroup(parent string) error {
	h := b.host.Cgroups
	dirs := []string{filepath.Join(cgroups.Root, parent)}
	if !h.V2 {
		dirs = []string{filepath.Join(cgroups.Root, "cpu", parent), filepath.Join(cgroups.Root, "memory", parent)}
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("making the pod cgroup: %w", err)
		}
	}
	if h.V2 {
		enableControllers(parent)
	}
	return nil
}

// enableControllers lets the cgroups below parent's ancestors use cpu,
// memory and pids (cgroup v2 hands controllers down level by level).
func enableControllers(parent string) {
	dir := cgroups.Root
	for _, part := range strings.Split(strings.Trim(filepath.Dir(parent), "/"), "/") {
		_ = os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+cpu +memory +pids"), 0o644)
		if part == "" {
			break
		}
		dir = filepath.Join(dir, part)
	}
	_ = os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+cpu +memory +pids"), 0o644)
	_ = os.WriteFile(filepath.Join(cgroups.Root, parent, "cgroup.subtree_control"), []byte("+cpu +memory +pids"), 0o644)
}

// UpdateSandboxResources writes the pod cgroup's new limits.
func (b *Backend) UpdateSandboxResources(_ context.Context, id string, r runtime.Resources) error {
	rec, err := b.readSandbox(id)
	if err != nil {
		return err
	}
	if err := b.ensurePodCgroup(rec.CgroupParent); err != nil {
		return err
	}
	return cgroups.WritePod(cgroups.Root, rec.CgroupParent, b.host.Cgroups, cgroups.UpdateResources(r, b.host.Cgroups))
}

// RemoveSandbox removes the pod's containers, ends its pause process and
// takes away its mounts, cgroup and records. A sandbox already gone is no
// error.
func (b *Backend) RemoveSandbox(ctx context.Context, id string) error {
	l := b.lock(id)
	l.Lock()
	defer l.Unlock()
	rec, err := b.readSandbox(id)
	if errors.Is(err, runtime.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, cid := range b.ids("c", containerFile) {
		if c, err := b.readContainer(cid); err == nil && c.SandboxID == id {
			if err := b.RemoveContainer(ctx, cid); err != nil {
				return err
			}
		}
	}
	if err := b.tearDownSandbox(rec, b.sandboxDir(id)); err != nil {
		return err
	}
	b.forgetLock(id)
	b.events.send(runtime.Event{PodUID: rec.Config.PodUID, Action: "sandbox-remove", Time: time.Now()})
	return nil
}

func (b *Backend) tearDownSandbox(rec *sandboxRecord, dir string) error {
	if err := rec.Pause.Kill(10 * time.Second); err != nil {
		return err
	}
	if rec.Shm != "" {
		if err := unmount.Detach(rec.Shm); err != nil {
			return fmt.Errorf("unmounting the pod's /dev/shm: %w", err)
		}
	}
	removeCgroup(rec.CgroupParent)
	if rec.SELinux.Process != "" {
		b.sel.Release(rec.SELinux.Process)
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	b.index.removeSandbox(rec.Config.PodUID, rec.ID)
	return nil
}

// removeCgroup removes a cgroup from every hierarchy it is in; one still
// busy stays (its processes are going).
func removeCgroup(path string) {
	dirs, _ := filepath.Glob(filepath.Join(cgroups.Root, "*", path))
	dirs = append(dirs, filepath.Join(cgroups.Root, path))
	for _, d := range dirs {
		_ = os.Remove(d)
	}
}

// sandboxOf is what the core sees of a sandbox.
func (b *Backend) sandboxOf(rec *sandboxRecord) runtime.Sandbox {
	st := runtime.SandboxNotReady
	if rec.Pause.Alive() {
		st = runtime.SandboxReady
	}
	c := rec.Config
	return runtime.Sandbox{ID: rec.ID, PodUID: c.PodUID, Namespace: c.Namespace, Name: c.Name, State: st,
		IPs: c.IPs, NetNS: c.NetNS, CreatedAt: rec.CreatedAt, Labels: c.Labels}
}
