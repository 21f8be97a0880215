// Package overlay mounts an image's layers, as both backends need them: a
// container's root filesystem (runc's) and an image volume, with the
// kernel's overlay, or fuse-overlayfs where the kernel refuses it.
package overlay

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxMountData is what mount(2) takes of its options: one page, less the
// terminating NUL.
const maxMountData = 4095

// MountImage mounts an image read-only at target, for an image volume.
func MountImage(target string, layers []string) error {
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
	return Mount(target, layers, "", unix.MS_RDONLY)
}

// Mount mounts layers (base first) at target with the kernel's overlay,
// rest appended to its options (an upper and a work directory), or with
// fuse-overlayfs where the kernel refuses it: the root directory on a
// filesystem overlay cannot write to (an overlay itself, as in a
// container), or a kernel without overlay.
func Mount(target string, layers []string, rest string, flags uintptr) error {
	err := kernelOverlay(target, layers, rest, flags)
	if err == nil || !overlayRefused(err) {
		return wrapMount(err)
	}
	fuse, lerr := exec.LookPath("fuse-overlayfs")
	if lerr != nil {
		return fmt.Errorf("%w; install fuse-overlayfs to run containers here", wrapMount(err))
	}
	if ferr := fuseOverlay(fuse, target, layers, rest, flags); ferr != nil {
		return fmt.Errorf("%w; fuse-overlayfs: %w", wrapMount(err), ferr)
	}
	return nil
}

func overlayRefused(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENODEV)
}

// fuseOverlay mounts layers at target with fuse-overlayfs, which goes to
// the background and serves the mount until it is unmounted: the container
// outlives runlet, and so does its root. allow_other lets the container's
// users in, which FUSE otherwise keeps to the one who mounted.
func fuseOverlay(fuse, target string, layers []string, rest string, flags uintptr) error {
	lower := slices.Clone(layers)
	slices.Reverse(lower)
	opts := "lowerdir=" + strings.Join(lower, ":") + rest + ",allow_other"
	if flags&unix.MS_RDONLY != 0 {
		opts += ",ro"
	}
	cmd := exec.Command(fuse, "-o", opts, target)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// kernelOverlay mounts layers with the kernel's overlay. Options too long
// for one page name the layers relative to their common directory, from a
// thread whose working directory is that directory, as containerd does.
func kernelOverlay(target string, layers []string, rest string, flags uintptr) error {
	lower := slices.Clone(layers)
	slices.Reverse(lower)
	data := "lowerdir=" + strings.Join(lower, ":") + rest
	if len(data) <= maxMountData {
		return unix.Mount("overlay", target, "overlay", flags, data)
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
	return <-errc
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
