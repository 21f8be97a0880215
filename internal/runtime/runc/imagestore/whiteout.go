package imagestore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

const (
	whiteoutPrefix = ".wh."
	// whiteoutMeta starts aufs's own bookkeeping files (.wh..wh.plnk and
	// the like), which are not whiteouts and are dropped.
	whiteoutMeta = ".wh..wh."
	opaqueMarker = ".wh..wh..opq"
)

// whiteout turns an OCI whiteout entry into overlayfs's form. A whiteout
// hides only what lower layers have: an entry of the same name in this
// layer, before or after it, stays.
func (u *unpacker) whiteout(dir, base string) error {
	if base == opaqueMarker {
		return u.opaqueDir(dir)
	}
	if strings.HasPrefix(base, whiteoutMeta) {
		return nil
	}
	name := strings.TrimPrefix(base, whiteoutPrefix)
	if name == "" || name == "." || name == ".." {
		return fmt.Errorf("a whiteout of %q", name)
	}
	if err := u.mkParents(dir); err != nil {
		return err
	}
	rel := dir + name
	target := filepath.Join(u.root, rel)
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		return err
	}
	// overlayfs reads a 0/0 character device as "deleted here".
	if err := unix.Mknod(target, unix.S_IFCHR, 0); err != nil {
		return fmt.Errorf("making the whiteout %s: %w", rel, err)
	}
	u.whiteouts[rel] = true
	return nil
}

// opaqueDir marks dir (made if this layer has not listed it yet) as hiding
// everything lower layers have in it.
func (u *unpacker) opaqueDir(dir string) error {
	if err := u.mkParents(dir); err != nil {
		return err
	}
	return u.setOpaque(filepath.Join(u.root, dir))
}

func (u *unpacker) setOpaque(p string) error {
	if err := unix.Lsetxattr(p, u.opaque, []byte("y"), 0); err != nil {
		return fmt.Errorf("marking %s opaque: %w", p, err)
	}
	return nil
}
