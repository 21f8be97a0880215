package runc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// maxMountData is what mount(2) takes of its options: one page, less the
// terminating NUL.
const maxMountData = 4095

// mountRootfs mounts a container's root filesystem at bundle/rootfs: an
// overlay of the image's layers (base first) under a writable layer of its
// own in bundle/upper.
func mountRootfs(bundle string, layers []string) error {
	upper, work, target := filepath.Join(bundle, "upper"), filepath.Join(bundle, "work"), filepath.Join(bundle, "rootfs")
	for _, d := range []string{upper, work, target} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if len(layers) == 0 {
		// An image of no layers is an empty directory: the upper layer alone.
		empty := filepath.Join(bundle, "empty")
		if err := os.MkdirAll(empty, 0o755); err != nil {
			return err
		}
		layers = []string{empty}
	}
	return mountOverlay(target, layers, ",upperdir="+upper+",workdir="+work, 0)
}

// mountImage mounts an image read-only at target, for an image volume.
func mountImage(target string, layers []string) error {
	if err := os.MkdirAll(target, 0o755); err != nil {
		return err
	}
	if len(layers) == 1 {
		// overlay wants two lower layers when it has no upper one.
		if err := unix.Mount(layers[0], target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("mounting image layer: %w", err)
		}
		return unix.Mount("", target, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_REC, "")
	}
	return mountOverlay(target, layers, "", unix.MS_RDONLY)
}

// mountOverlay mounts layers (base first) at target. Options too long for
// one page name the layers relative to their common directory, from a
// thread whose working directory is that directory, as containerd does.
func mountOverlay(target string, layers []string, rest string, flags uintptr) error {
	lower := slices.Clone(layers)
	slices.Reverse(lower)
	data := "lowerdir=" + strings.Join(lower, ":") + rest
	if len(data) <= maxMountData {
		return wrapMount(unix.Mount("overlay", target, "overlay", flags, data))
	}
	dir := filepath.Dir(lower[0])
	for i, l := range lower {
		if filepath.Dir(l) != dir {
			return fmt.Errorf("mounting the root filesystem: %d layers are too many for one mount", len(layers))
		}
		lower[i] = filepath.Base(l)
	}
	data = "lowerdir=" + strings.Join(lower, ":") + rest
	if len(data) > maxMountData {
		return fmt.Errorf("mounting the root filesystem: %d layers are too many for one mount", len(layers))
	}
	errc := make(chan error, 1)
	go func() {
		// The thread's working directory is changed for good: it is never
		// unlocked, so Go ends it with this goroutine.
		goruntime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_FS); err != nil {
			errc <- err
			return
		}
		if err := unix.Chdir(dir); err != nil {
			errc <- err
			return
		}
		errc <- unix.Mount("overlay", target, "overlay", flags, data)
	}()
	return wrapMount(<-errc)
}

func wrapMount(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENODEV) {
		return fmt.Errorf("mounting the root filesystem (overlay): %w; runlet needs root and a kernel with overlayfs", err)
	}
	return fmt.Errorf("mounting the root filesystem (overlay): %w", err)
}

// unmount detaches target; one not mounted is no error.
func unmount(target string) error {
	err := unix.Unmount(target, unix.MNT_DETACH)
	if err == nil || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
		return nil
	}
	return fmt.Errorf("unmounting %s: %w", target, err)
}
