package volume

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
	mount "k8s.io/mount-utils"
)

// sysMounter is mount-utils' Linux mounter with mounting and unmounting done
// by the mount(2) and umount(2) system calls: runlet's image has no mount
// binaries, and runlet only ever makes tmpfs mounts and plain binds.
// Everything that reads mounts (IsMountPoint, List, ...) is mount-utils'.
type sysMounter struct {
	mount.Interface
}

func newMounter() mount.Interface { return sysMounter{mount.NewWithoutSystemd("")} }

// Mount mounts source at target; "bind", "ro" and "remount" become flags,
// the other options are the file system's data ("size=...").
func (sysMounter) Mount(source, target, fstype string, options []string) error {
	var flags uintptr
	var data []string
	for _, o := range options {
		switch o {
		case "bind":
			flags |= unix.MS_BIND
		case "rbind":
			flags |= unix.MS_BIND | unix.MS_REC
		case "ro":
			flags |= unix.MS_RDONLY
		case "remount":
			flags |= unix.MS_REMOUNT
		case "nodev":
			flags |= unix.MS_NODEV
		case "nosuid":
			flags |= unix.MS_NOSUID
		case "defaults", "rw":
		default:
			data = append(data, o)
		}
	}
	if err := unix.Mount(source, target, fstype, flags, strings.Join(data, ",")); err != nil {
		return fmt.Errorf("mount %s on %s (%s %v): %w", source, target, fstype, options, err)
	}
	return nil
}

// MountSensitive implements mount.Interface; sensitive options are data.
func (m sysMounter) MountSensitive(source, target, fstype string, options, sensitive []string) error {
	return m.Mount(source, target, fstype, append(append([]string{}, options...), sensitive...))
}

// MountSensitiveWithoutSystemd implements mount.Interface (runlet never uses systemd scopes).
func (m sysMounter) MountSensitiveWithoutSystemd(source, target, fstype string, options, sensitive []string) error {
	return m.MountSensitive(source, target, fstype, options, sensitive)
}

// MountSensitiveWithoutSystemdWithMountFlags implements mount.Interface. The
// only flag callers pass is --no-canonicalize, which mount(2) never does.
func (m sysMounter) MountSensitiveWithoutSystemdWithMountFlags(source, target, fstype string, options, sensitive, _ []string) error {
	return m.MountSensitive(source, target, fstype, options, sensitive)
}

// Unmount unmounts target; a busy mount is detached, and freed by the
// kernel once nothing uses it.
func (sysMounter) Unmount(target string) error {
	err := unix.Unmount(target, 0)
	if errors.Is(err, unix.EBUSY) {
		err = unix.Unmount(target, unix.MNT_DETACH)
	}
	if err != nil {
		return fmt.Errorf("unmount %s: %w", target, err)
	}
	return nil
}

// isTmpfs reports whether dir is the root of a tmpfs mount.
func isTmpfs(m mount.Interface, dir string) (bool, error) {
	notMnt, err := m.IsLikelyNotMountPoint(dir)
	if err != nil || notMnt {
		return false, err
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return false, err
	}
	return st.Type == unix.TMPFS_MAGIC, nil
}
