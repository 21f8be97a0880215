package runc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/cgroups"
	"github.com/runlet/runlet/internal/runtime/idmap"
	"github.com/runlet/runlet/internal/runtime/runc/imagestore"
	"github.com/runlet/runlet/internal/runtime/runc/ocispec"
	"github.com/runlet/runlet/internal/unmount"
)

// CreateContainer prepares the container's bundle: its root filesystem,
// image volumes, spec and record. StartContainer runs it.
func (b *Backend) CreateContainer(ctx context.Context, sandboxID string, cfg runtime.ContainerConfig) (string, error) {
	sb, err := b.readSandbox(sandboxID)
	if err != nil {
		return "", fmt.Errorf("container %s: sandbox %s: %w", cfg.Name, sandboxID, err)
	}
	im, err := b.images.Image(cfg.Image)
	if err != nil {
		return "", fmt.Errorf("container %s: %w", cfg.Name, err)
	}
	b.images.MarkUsed(cfg.Image)
	rec := &containerRecord{ID: newID(), SandboxID: sandboxID, PodUID: sb.Config.PodUID, Namespace: sb.Config.Namespace,
		PodName: sb.Config.Name, Config: cfg, ImageID: im.ID, StopSignal: im.Config.StopSignal, CreatedAt: time.Now()}
	rec.CgroupPath = path.Join(sb.CgroupParent, rec.ID)
	bundle := b.bundle(rec.ID)
	if err := os.MkdirAll(bundle, 0o700); err != nil {
		return "", err
	}
	b.index.addContainer(rec.PodUID, rec.ID)
	if err := b.createContainer(ctx, sb, rec, im); err != nil {
		_ = b.removeBundle(rec)
		return "", fmt.Errorf("container %s: %w", cfg.Name, err)
	}
	b.events.send(runtime.Event{PodUID: rec.PodUID, ContainerID: rec.ID, Action: "create", Time: rec.CreatedAt})
	return rec.ID, nil
}

func (b *Backend) createContainer(ctx context.Context, sb *sandboxRecord, rec *containerRecord, im imagestore.Image) error {
	bundle := b.bundle(rec.ID)
	labels, err := containerLabels(b.sel, sb.SELinux, rec.Config.Security.SELinuxOptions)
	if err != nil {
		return err
	}
	rec.SELinux, rec.OwnLevel = labels, ownLevel(sb.SELinux, labels)
	if err := relabelMounts(b.sel, rec.Config.Mounts, labels); err != nil {
		return err
	}
	pod := ocispec.Pod{Config: sb.Config, Net: b.podNet(sb), IPC: sb.Pause.NS("ipc"), UTS: sb.Pause.NS("uts"),
		PID: sb.Pause.NS("pid"), Shm: sb.Shm, CgroupParent: sb.CgroupParent}
	cfg := rec.Config
	var layers layerSource = plainLayers{}
	if u := sb.Config.UserNS; u != nil {
		userns, err := podUserNS(sb)
		if err != nil {
			return err
		}
		defer userns.Close()
		if rec.MountDir, err = idmap.OpenDir(b.opts.RunDir, rec.ID); err != nil {
			return err
		}
		if cfg, pod.Shm, err = b.userNSMounts(rec, sb, userns); err != nil {
			return err
		}
		pod.User, layers = sb.Pause.NS("user"), idmappedLayers{userns: userns, ns: u}
	}
	if err := b.mountContainerRoot(rec, im.LayerDirs, layers); err != nil {
		return err
	}
	roots, err := b.mountImageVolumes(rec, layers)
	if err != nil {
		return err
	}
	spec, err := ocispec.Build(ocispec.Input{
		ID: rec.ID, Container: cfg, Rootfs: b.rootfs(rec), ImageRoots: roots, Host: b.host,
		ProcessLabel: labels.Process, MountLabel: labels.Mount, Pod: pod,
		Image: ocispec.ImageConfig{User: im.Config.User, Env: im.Config.Env, Entrypoint: im.Config.Entrypoint,
			Cmd: im.Config.Cmd, WorkingDir: im.Config.WorkingDir},
	})
	if err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(bundle, "config.json"), spec); err != nil {
		return err
	}
	return b.writeContainer(rec)
}

// mountDir is where the container's mount points are: its MountDir, else
// its bundle.
func (b *Backend) mountDir(rec *containerRecord) string {
	if rec.MountDir != "" {
		return rec.MountDir
	}
	return b.bundle(rec.ID)
}

func (b *Backend) rootfs(rec *containerRecord) string {
	return filepath.Join(b.mountDir(rec), "rootfs")
}

// mountContainerRoot mounts the container's root filesystem from the
// image's layers, as layers gives them.
func (b *Backend) mountContainerRoot(rec *containerRecord, dirs []string, layers layerSource) error {
	lower, done, err := layers.prepare(filepath.Join(b.mountDir(rec), "l"), dirs)
	if err != nil {
		return err
	}
	defer done()
	bundle := b.bundle(rec.ID)
	if err := layers.ownUpper(filepath.Join(bundle, "upper")); err != nil {
		return err
	}
	return mountRootfs(bundle, b.rootfs(rec), lower)
}

// podNet is the network namespace a pod's containers join: the core's, or
// the pause process's own when the core gave none.
func (b *Backend) podNet(sb *sandboxRecord) string {
	if sb.Config.NetNS != "" || sb.Config.HostNetwork {
		return sb.Config.NetNS
	}
	return sb.Pause.NS("net")
}

// mountImageVolumes mounts the images the container mounts as volumes,
// read-only, in its bundle.
func (b *Backend) mountImageVolumes(rec *containerRecord, layers layerSource) (map[string]string, error) {
	roots := map[string]string{}
	for _, m := range rec.Config.Mounts {
		if m.Image == "" || roots[m.Image] != "" {
			continue
		}
		im, err := b.images.Image(m.Image)
		if err != nil {
			return nil, fmt.Errorf("image volume at %s: %w", m.ContainerPath, err)
		}
		b.images.MarkUsed(m.Image)
		target := filepath.Join(b.mountDir(rec), "img"+strconv.Itoa(len(roots)))
		rec.ImageMounts = append(rec.ImageMounts, target)
		if err := layers.mountImage(target, im.LayerDirs); err != nil {
			return nil, fmt.Errorf("image volume %s: %w", m.Image, err)
		}
		roots[m.Image] = target
	}
	return roots, nil
}

// StartContainer has conmon run `runc create` for the created container,
// then starts it: as containerd's CRI makes the task only at the start, so
// that a process that cannot run (no such binary, a working directory that
// is a file) fails the start, not the create, as on the kubelet.
func (b *Backend) StartContainer(ctx context.Context, id string) error {
	l := b.lock(id)
	l.Lock()
	defer l.Unlock()
	rec, err := b.readContainer(id)
	if err != nil {
		return err
	}
	if rec.StartedAt.IsZero() && rec.StartError == "" {
		err = b.start(ctx, rec)
	} else {
		err = fmt.Errorf("container %s was started before: a container starts once", rec.Config.Name)
	}
	if err != nil {
		return fmt.Errorf("container %s: %w", rec.Config.Name, err)
	}
	b.events.send(runtime.Event{PodUID: rec.PodUID, ContainerID: id, Action: "start", Time: rec.StartedAt})
	return nil
}

// start runs the container; a failure is kept in the record, which then
// shows the container ended.
func (b *Backend) start(ctx context.Context, rec *containerRecord) error {
	b.ooms.Learn(rec.ID, rec.CgroupPath)
	err := b.startMonitor(ctx, rec)
	if err == nil {
		bundle := b.bundle(rec.ID)
		var err1, err2 error
		rec.Init, err1 = processFromFile(filepath.Join(bundle, "pidfile"))
		rec.Monitor, err2 = processFromFile(filepath.Join(bundle, "conmon.pid"))
		err = errors.Join(err1, err2)
	}
	if err == nil {
		err = b.release(ctx, rec)
	}
	rec.StartedAt = time.Now()
	if err != nil {
		_, _ = b.runcCmd(context.WithoutCancel(ctx), "delete", "--force", rec.ID)
		rec.StartError = err.Error()
	}
	if werr := b.writeContainer(rec); werr != nil && err == nil {
		err = werr
	}
	return err
}

// UpdateContainerResources changes a running container's cgroup.
func (b *Backend) UpdateContainerResources(ctx context.Context, id string, r runtime.Resources) error {
	l := b.lock(id)
	l.Lock()
	defer l.Unlock()
	rec, err := b.readContainer(id)
	if err != nil {
		return err
	}
	res, err := json.Marshal(cgroups.UpdateResources(r, b.host.Cgroups))
	if err != nil {
		return err
	}
	if _, err := b.runcInput(ctx, res, "update", "--resources", "-", id); err != nil {
		return fmt.Errorf("container %s: %w", rec.Config.Name, err)
	}
	rec.Config.Resources = r
	return b.writeContainer(rec)
}

// RemoveContainer kills what still runs, deletes the container from runc
// and removes its bundle. A container already gone is no error.
func (b *Backend) RemoveContainer(ctx context.Context, id string) error {
	l := b.lock(id)
	l.Lock()
	defer l.Unlock()
	rec, err := b.readContainer(id)
	if errors.Is(err, runtime.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := b.runcCmd(ctx, "delete", "--force", id); err != nil && !notExist(err) {
		return fmt.Errorf("container %s: %w", rec.Config.Name, err)
	}
	// A container's cgroup can outlive `runc delete` (a full conformance
	// run on a hybrid host left some, mostly in the named systemd and the
	// unified hierarchies), and would then keep the pod's from going.
	if err := cgroups.Destroy(cgroups.Root, rec.CgroupPath); err != nil {
		b.logf("container %s: %v", rec.Config.Name, err)
	}
	if err := b.removeBundle(rec); err != nil {
		return err
	}
	if rec.OwnLevel {
		b.sel.Release(rec.SELinux.Process)
	}
	b.forgetLock(id)
	b.events.send(runtime.Event{PodUID: rec.PodUID, ContainerID: id, Action: "remove", Time: time.Now()})
	return nil
}

// removeBundle unmounts and removes what the container had on disk.
func (b *Backend) removeBundle(rec *containerRecord) error {
	bundle := b.bundle(rec.ID)
	for _, m := range append(rec.ImageMounts, b.rootfs(rec)) {
		if err := unmount.Detach(m); err != nil {
			return fmt.Errorf("unmounting %s: %w", m, err)
		}
	}
	if rec.MountDir != "" {
		if err := idmap.Unmount(rec.MountDir, rec.IDMapped); err != nil {
			return err
		}
	}
	_ = os.Remove(filepath.Join(b.exitDir(), rec.ID))
	b.exits.Delete(rec.ID)
	if err := os.RemoveAll(bundle); err != nil {
		return err
	}
	b.index.removeContainer(rec.PodUID, rec.ID)
	return nil
}
