// Package netns pins network namespaces in files and runs code inside them,
// for the pod network (internal/network/cni) and for the backends that dial
// into a pod (port-forward).
//
// Code runs in a namespace on a locked OS thread that goes back to runlet's
// namespace afterwards and is unlocked. Only if going back fails does the
// thread stay locked, for Go to retire with its goroutine, so that no other
// goroutine ever runs in a pod's namespace. A retired thread is avoided
// otherwise: a child process it forked earlier (the podman service runlet
// starts) gets its parent-death signal when the thread ends.
package netns

import (
	"errors"
	"fmt"
	"net"
	"os"
	goruntime "runtime"

	"github.com/runlet/runlet/internal/unmount"
	"golang.org/x/sys/unix"
)

// Pin creates a network namespace pinned by a bind mount at path, as
// iproute2's `ip netns add` does. path's directory must be a shared mount
// (EnsureSharedDir) for other mount namespaces to see it.
func Pin(path string) error {
	return pinAt(path, func() error {
		return onThread(unshare, func() error {
			return bind(fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid()), path)
		})
	})
}

// PinFrom pins the network namespace at source (/proc/<pid>/ns/net of the
// process that made it) at path, as Pin pins a new one.
func PinFrom(source, path string) error {
	return pinAt(path, func() error { return bind(source, path) })
}

// pinAt makes the mount point path and pins there; on error nothing is
// left behind.
func pinAt(path string, pin func() error) error {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return fmt.Errorf("creating the netns mount point: %w", err)
	}
	f.Close()
	if err := pin(); err != nil {
		_ = os.Remove(path)
		return err
	}
	return nil
}

func bind(source, path string) error {
	if err := unix.Mount(source, path, "none", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("pinning the netns at %s: %w", path, err)
	}
	return nil
}

func unshare() error {
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("unshare(CLONE_NEWNET): %w", err)
	}
	return nil
}

// Do runs fn inside the network namespace at path (a pinned file, or
// /proc/<pid>/ns/net). Errors opening or entering it wrap the system's
// (ENOENT, EPERM).
func Do(path string, fn func() error) error {
	return onThread(func() error { return enter(path) }, fn)
}

// onThread runs enter and then fn on a locked OS thread, and takes the
// thread back to runlet's namespace afterwards (see the package doc).
func onThread(enter, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		goruntime.LockOSThread()
		own, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- fmt.Errorf("opening runlet's network namespace: %w", err)
			return
		}
		defer unix.Close(own)
		err = enter()
		if err == nil {
			err = fn()
		}
		// Back home before the caller goes on: the thread may be the
		// process's main one, whose namespace /proc/self shows.
		if unix.Setns(own, unix.CLONE_NEWNET) == nil {
			goruntime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}

func enter(path string) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening the pod's network namespace: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("entering the pod's network namespace: %w", err)
	}
	return nil
}

// Remove unmounts and removes a pinned namespace; one already gone is not
// an error.
func Remove(path string) error {
	if err := unmount.Detach(path); err != nil {
		return fmt.Errorf("unmounting the netns %s: %w", path, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// nsfsMagic is the file system type of a pinned namespace.
const nsfsMagic = 0x6e736673

// IsPinned reports whether path is a namespace pinned by a bind mount.
func IsPinned(path string) bool {
	var st unix.Statfs_t
	return unix.Statfs(path, &st) == nil && st.Type == nsfsMagic
}

// EnsureSharedDir makes dir a shared mount point, as iproute2 does for
// /run/netns: a namespace pinned below it then shows in every mount
// namespace that has the directory, such as the podman service's.
func EnsureSharedDir(dir string) error {
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

// Addresses are the unicast addresses of the interface ifname in the
// namespace at path, IPv4 first, without link-local ones.
func Addresses(path, ifname string) ([]string, error) {
	var v4, v6 []string
	err := Do(path, func() error {
		iface, err := net.InterfaceByName(ifname)
		if err != nil {
			return err
		}
		addrs, err := iface.Addrs()
		if err != nil {
			return err
		}
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok || n.IP.IsLinkLocalUnicast() {
				continue
			}
			if n.IP.To4() != nil {
				v4 = append(v4, n.IP.String())
			} else {
				v6 = append(v6, n.IP.String())
			}
		}
		return nil
	})
	return append(v4, v6...), err
}
