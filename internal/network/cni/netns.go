package cni

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// newNetNS creates a network namespace pinned by a bind mount at path, as
// iproute2's `ip netns add` does, without changing the namespace of any
// goroutine but a throw-away locked thread.
func newNetNS(path string) error {
	if err := ensureSharedDir(filepath.Dir(path)); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return fmt.Errorf("creating the netns mount point: %w", err)
	}
	f.Close()
	if err := inThreadNetNS("", func() error { return pinNewNetNS(path) }); err != nil {
		_ = os.Remove(path)
		return err
	}
	return nil
}

// inThreadNetNS runs fn on a locked OS thread, in the network namespace at
// path ("": fn makes its own), and moves the thread back to runlet's
// namespace afterwards. Only if that fails does the thread stay locked, and
// Go retire it with the goroutine, so that no other goroutine runs in a
// pod's namespace. A retired thread is avoided otherwise: a child process
// it forked earlier (the podman service runlet starts) gets its parent-death
// signal when it goes.
func inThreadNetNS(path string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		goruntime.LockOSThread()
		own, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- fmt.Errorf("opening runlet's network namespace: %w", err)
			return
		}
		defer unix.Close(own)
		err = enterNetNS(path)
		if err == nil {
			err = fn()
		}
		errc <- err
		if unix.Setns(own, unix.CLONE_NEWNET) == nil {
			goruntime.UnlockOSThread()
		}
	}()
	return <-errc
}

func enterNetNS(path string) error {
	if path == "" {
		return nil
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("entering the pod's network namespace: %w", err)
	}
	return nil
}

func pinNewNetNS(path string) error {
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("unshare(CLONE_NEWNET): %w", err)
	}
	self := fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid())
	if err := unix.Mount(self, path, "none", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("pinning the netns at %s: %w", path, err)
	}
	return nil
}

// removeNetNS unmounts and removes a pinned namespace; one already gone is
// not an error.
func removeNetNS(path string) error {
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmounting the netns %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// ensureSharedDir makes dir a shared mount point, as iproute2 does for
// /run/netns: a namespace pinned below it then shows in every mount
// namespace that has the directory, such as the podman service's.
func ensureSharedDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	err := unix.Mount("", dir, "none", unix.MS_SHARED|unix.MS_REC, "")
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("making %s a shared mount: %w", dir, err)
	}
	// Not a mount point yet: bind it onto itself first.
	if err := unix.Mount(dir, dir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind-mounting %s: %w", dir, err)
	}
	if err := unix.Mount("", dir, "none", unix.MS_SHARED|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("making %s a shared mount: %w", dir, err)
	}
	return nil
}

// nsfsMagic is the file system type of a pinned namespace.
const nsfsMagic = 0x6e736673

// isNetNS reports whether path is a namespace pinned by a bind mount.
func isNetNS(path string) bool {
	var st unix.Statfs_t
	return unix.Statfs(path, &st) == nil && st.Type == nsfsMagic
}

// setSysctls writes net.* sysctls inside the namespace at path: /proc/sys/net
// is the namespace of the thread that opens it.
func setSysctls(path string, sysctls map[string]string) error {
	if len(sysctls) == 0 {
		return nil
	}
	return inThreadNetNS(path, func() error {
		for name, value := range sysctls {
			file := filepath.Join("/proc/sys", strings.ReplaceAll(name, ".", "/"))
			if err := os.WriteFile(file, []byte(value), 0o644); err != nil {
				return fmt.Errorf("sysctl %s=%s: %w", name, value, err)
			}
		}
		return nil
	})
}
