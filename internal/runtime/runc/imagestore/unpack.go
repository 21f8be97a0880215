package imagestore

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// unpacker writes one layer's tar into a directory of its own, which
// becomes an overlay lower dir: whiteouts take overlayfs's form, and owners,
// modes, times and xattrs are kept as far as runlet's user may.
type unpacker struct {
	root   string
	owners bool
	opaque string
	size   uint64
	// whiteouts are the paths this layer whited out: an entry of the same
	// name later in the layer replaces the whiteout.
	whiteouts map[string]bool
	// dirs get their mode and times last, deepest first: a read-only
	// directory must still take its entries, and every entry written
	// changes its directory's mtime.
	dirs map[string]*tar.Header
}

// unpack writes the tar and returns the bytes of its regular files.
func (u *unpacker) unpack(r io.Reader) (uint64, error) {
	u.whiteouts = map[string]bool{}
	u.dirs = map[string]*tar.Header{}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		// The names tar calls insecure are judged by cleanPath instead,
		// whatever GODEBUG says.
		if err != nil && (hdr == nil || !errors.Is(err, tar.ErrInsecurePath)) {
			return 0, err
		}
		if err := u.entry(tr, hdr); err != nil {
			return 0, fmt.Errorf("%s: %w", hdr.Name, err)
		}
	}
	return u.size, u.finishDirs()
}

func (u *unpacker) entry(r io.Reader, hdr *tar.Header) error {
	rel, err := cleanPath(hdr.Name)
	if err != nil {
		return err
	}
	dir, base := path.Split(rel)
	if strings.HasPrefix(base, whiteoutPrefix) {
		return u.whiteout(dir, base)
	}
	if rel == "" {
		if hdr.Typeflag != tar.TypeDir {
			return errors.New("the layer's root is not a directory")
		}
		return u.setAttrs(u.root, rel, hdr)
	}
	if err := u.mkParents(dir); err != nil {
		return err
	}
	return u.place(r, hdr, rel)
}

// place puts an entry at rel, in place of whatever this layer had there
// before (a directory stays, for a directory: its entries are kept).
func (u *unpacker) place(r io.Reader, hdr *tar.Header, rel string) error {
	target := filepath.Join(u.root, rel)
	isDir := hdr.Typeflag == tar.TypeDir
	overWhiteout, err := u.clear(rel, isDir)
	if err != nil {
		return err
	}
	made, err := u.create(r, hdr, target)
	if err != nil || !made {
		return err
	}
	// A directory where this layer whited one out replaces the lower
	// layers' directory, contents and all: overlayfs calls that opaque.
	if overWhiteout {
		if err := u.setOpaque(target); err != nil {
			return err
		}
	}
	if hdr.Typeflag == tar.TypeLink {
		return nil // the inode has its attributes from its first name
	}
	return u.setAttrs(target, rel, hdr)
}

// clear removes what this layer has at rel, unless both are directories,
// and reports whether it was a whiteout replaced by a directory.
func (u *unpacker) clear(rel string, isDir bool) (bool, error) {
	target := filepath.Join(u.root, rel)
	fi, err := os.Lstat(target)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	wasWhiteout := u.whiteouts[rel]
	if fi.IsDir() && isDir {
		return false, nil
	}
	u.forget(rel)
	return wasWhiteout && isDir, os.RemoveAll(target)
}

// forget drops what the unpacker remembers of rel and below, once removed.
func (u *unpacker) forget(rel string) {
	for p := range u.dirs {
		if p == rel || strings.HasPrefix(p, rel+"/") {
			delete(u.dirs, p)
		}
	}
	for p := range u.whiteouts {
		if p == rel || strings.HasPrefix(p, rel+"/") {
			delete(u.whiteouts, p)
		}
	}
}

// create makes the entry's file; it reports false for an entry it skips.
func (u *unpacker) create(r io.Reader, hdr *tar.Header, target string) (bool, error) {
	switch hdr.Typeflag {
	case tar.TypeDir:
		err := os.Mkdir(target, 0o755)
		if errors.Is(err, os.ErrExist) {
			err = nil
		}
		return true, err
	case tar.TypeReg, tar.TypeGNUSparse:
		return true, u.writeFile(r, target)
	case tar.TypeSymlink:
		// The link's target is left as it is: it is resolved inside the
		// container's root, never here.
		return true, os.Symlink(hdr.Linkname, target)
	case tar.TypeLink:
		return true, u.hardlink(target, hdr.Linkname)
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		return u.mknod(target, hdr)
	}
	return false, nil
}

func (u *unpacker) writeFile(r io.Reader, target string) error {
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, r)
	u.size += uint64(n)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// hardlink links target to an earlier entry of the same layer, reached
// without following any symlink.
func (u *unpacker) hardlink(target, linkname string) error {
	src, err := cleanPath(linkname)
	if err == nil && src == "" {
		err = errors.New("that is the layer's root")
	}
	if err != nil {
		return fmt.Errorf("hardlink to %s: %w", linkname, err)
	}
	if err := u.checkParents(path.Dir(src)); err != nil {
		return fmt.Errorf("hardlink to %s: %w", linkname, err)
	}
	fi, err := os.Lstat(filepath.Join(u.root, src))
	if err != nil {
		return fmt.Errorf("hardlink to %s: %w", linkname, err)
	}
	if fi.IsDir() {
		return fmt.Errorf("hardlink to the directory %s", linkname)
	}
	return os.Link(filepath.Join(u.root, src), target)
}

// mknod makes a device or a fifo. Without root a device is skipped: the
// runtime gives a container its /dev, and an image's own devices are rare.
func (u *unpacker) mknod(target string, hdr *tar.Header) (bool, error) {
	mode := uint32(hdr.Mode & 0o7777)
	switch hdr.Typeflag {
	case tar.TypeChar:
		mode |= unix.S_IFCHR
	case tar.TypeBlock:
		mode |= unix.S_IFBLK
	default:
		mode |= unix.S_IFIFO
	}
	dev := unix.Mkdev(uint32(hdr.Devmajor), uint32(hdr.Devminor))
	err := unix.Mknod(target, mode, int(dev))
	if errors.Is(err, unix.EPERM) && !u.owners && hdr.Typeflag != tar.TypeFifo {
		return false, nil
	}
	return err == nil, err
}
