// Package unmount detaches the mounts runlet makes (pinned namespaces, a
// pod's /dev/shm, root filesystems, idmapped clones) when it tears them
// down, where one already gone must not stop the teardown.
package unmount

import (
	"errors"

	"golang.org/x/sys/unix"
)

// Detach lazily unmounts target. A target that is not a mount point
// (EINVAL), or no longer exists (ENOENT), was torn down before: no error.
func Detach(target string) error {
	err := unix.Unmount(target, unix.MNT_DETACH)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}
