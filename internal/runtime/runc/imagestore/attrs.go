package imagestore

import (
	"archive/tar"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

const paxXattr = "SCHILY.xattr."

// setAttrs gives an entry the owner, xattrs, mode and times its header
// says, in that order: a chown clears setuid bits and file capabilities. A
// directory's mode and times wait for finishDirs.
func (u *unpacker) setAttrs(target, rel string, hdr *tar.Header) error {
	if u.owners {
		if err := os.Lchown(target, hdr.Uid, hdr.Gid); err != nil {
			return err
		}
	}
	if err := setXattrs(target, hdr); err != nil {
		return err
	}
	if hdr.Typeflag == tar.TypeDir {
		u.dirs[rel] = hdr
		return nil
	}
	return setModeAndTimes(target, hdr)
}

// setXattrs sets the xattrs the tar carries, but none of overlayfs's own:
// those a layer gets only from its whiteouts, or an image could redirect
// the overlay's lookups. Without root, or on a filesystem without xattrs,
// what cannot be set is left out.
func setXattrs(target string, hdr *tar.Header) error {
	for k, v := range hdr.PAXRecords {
		name, ok := strings.CutPrefix(k, paxXattr)
		if !ok || strings.HasPrefix(name, "trusted.overlay.") || strings.HasPrefix(name, "user.overlay.") {
			continue
		}
		err := unix.Lsetxattr(target, name, []byte(v), 0)
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOTSUP) {
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func setModeAndTimes(target string, hdr *tar.Header) error {
	if hdr.Typeflag != tar.TypeSymlink { // a symlink's mode means nothing on Linux
		if err := unix.Fchmodat(unix.AT_FDCWD, target, uint32(hdr.Mode&0o7777), 0); err != nil {
			return err
		}
	}
	return setTimes(target, hdr)
}

func setTimes(target string, hdr *tar.Header) error {
	mtime := hdr.ModTime
	if mtime.IsZero() {
		mtime = time.Unix(0, 0)
	}
	atime := hdr.AccessTime
	if atime.IsZero() {
		atime = mtime
	}
	a, err := unix.TimeToTimespec(atime)
	if err != nil {
		return err
	}
	m, err := unix.TimeToTimespec(mtime)
	if err != nil {
		return err
	}
	return unix.UtimesNanoAt(unix.AT_FDCWD, target, []unix.Timespec{a, m}, unix.AT_SYMLINK_NOFOLLOW)
}

// finishDirs sets the directories' modes and times, deepest first, now
// that nothing more is written into them.
func (u *unpacker) finishDirs() error {
	rels := make([]string, 0, len(u.dirs))
	for rel := range u.dirs {
		rels = append(rels, rel)
	}
	slices.SortFunc(rels, func(a, b string) int { return len(b) - len(a) })
	for _, rel := range rels {
		if err := setModeAndTimes(filepath.Join(u.root, rel), u.dirs[rel]); err != nil {
			return err
		}
	}
	return nil
}
