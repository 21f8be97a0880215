package runc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
		CgroupParent: cgroups.PodCgroupPath(cfg.PodUID)}
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
	if err := b.podCgroup(rec).Make(cfg.Resources); err != nil {
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
	// The pause process is made in the pod cgroup, as the kubelet's pause
	// container runs in it; on v1, in the other hierarchies, among runlet's
	// helpers: out of runlet's own cgroup, and out of the pod's pids limit,
	// which would count its runtime's threads where the kubelet's pause
	// has one.
	dirs, err := cgroups.HelperDirs(cgroups.Root, b.podCgroup(rec).Dirs())
	if err != nil {
		return err
	}
	p, err := pause.Start(pause.Config{Namespaces: ns, Hostname: hostname, Cgroups: dirs, UserNS: cfg.UserNS, Binary: b.pause})
	if err != nil {
		return err
	}
	rec.Pause = p
	if cfg.AttachNetwork != nil {
		// The pod network: in the namespace the pause process made inside
		// the pod's user namespace, else the one the core's set-up, begun
		// before, pins at NetNS (NetworkBeside).
		source := ""
		if cfg.UserNS != nil {
			source = p.NS("net")
		}
		if rec.Config.IPs, err = cfg.AttachNetwork(ctx, source); err != nil {
			return err
		}
	}
	return writeJSON(filepath.Join(dir, sandboxFile), rec)
}

// podCgroup is the pod's cgroup, the kubelet's pod cgroup, which its
// containers' cgroups are below.
func (b *Backend) podCgroup(rec *sandboxRecord) cgroups.PodCgroup {
	return cgroups.PodCgroup{Root: cgroups.Root, Path: rec.CgroupParent, Host: b.host.Cgroups}
}

// ReleasePod implements runtime.Runtime: it destroys the pod cgroup, with
// any container cgroup below it and what still runs there (a pause process
// whose sandbox record a crash kept from being written).
func (b *Backend) ReleasePod(_ context.Context, uid string) error {
	return cgroups.Destroy(cgroups.Root, cgroups.PodCgroupPath(uid))
}

// UpdateSandboxResources writes the pod cgroup's new limits.
func (b *Backend) UpdateSandboxResources(_ context.Context, id string, r runtime.Resources) error {
	rec, err := b.readSandbox(id)
	if err != nil {
		return err
	}
	return b.podCgroup(rec).Update(r)
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
	b.podCgroup(rec).Remove()
	if rec.SELinux.Process != "" {
		b.sel.Release(rec.SELinux.Process)
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	b.index.removeSandbox(rec.Config.PodUID, rec.ID)
	return nil
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
