// Package idmap gives a pod in a user namespace of its own (hostUsers:
// false) its files as containerd does: through idmapped mounts, so that
// what root owns on the host, the pod's root owns in the pod, and what the
// pod writes is stored unshifted. runc (1.1) makes none itself, so the
// backends attach idmapped clones of what they bind into such a pod's
// containers, in a directory of the container's that the pod's root, an
// unprivileged user on the host, can reach by path.
package idmap

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/overlay"
	"github.com/runlet/runlet/internal/unmount"
	"golang.org/x/sys/unix"
)

// Clone attaches at target an idmapped clone of the mount of source (a
// directory or a file; not the mounts below it), mapped as the user
// namespace userns maps.
func Clone(source, target string, userns *os.File) error {
	tree, err := unix.OpenTree(unix.AT_FDCWD, source, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return fmt.Errorf("cloning the mount of %s: %w", source, err)
	}
	defer unix.Close(tree)
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_IDMAP, Userns_fd: uint64(userns.Fd())}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, &attr); err != nil {
		return fmt.Errorf("idmapping %s for the pod's user namespace (its file system may not support idmapped mounts): %w", source, err)
	}
	if err := mountPoint(source, target); err != nil {
		return err
	}
	if err := unix.MoveMount(tree, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("attaching the idmapped %s: %w", source, err)
	}
	return nil
}

// mountPoint makes target a file or a directory, as source is.
func mountPoint(source, target string) error {
	st, err := os.Stat(source)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o711); err != nil {
		return err
	}
	if st.IsDir() {
		return os.MkdirAll(target, 0o755)
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// Mounts gives a container idmapped clones of its bind mounts' sources,
// attached below dir/m, and returns its mounts with those sources and the
// clones made (which the caller unmounts with the container).
func Mounts(dir string, mounts []runtime.Mount, userns *os.File) ([]runtime.Mount, []string, error) {
	out := append([]runtime.Mount(nil), mounts...)
	var made []string
	for i, m := range out {
		if m.HostPath == "" {
			continue
		}
		target := filepath.Join(dir, "m", strconv.Itoa(len(made)))
		if err := Clone(m.HostPath, target, userns); err != nil {
			return out, made, fmt.Errorf("mount at %s: %w", m.ContainerPath, err)
		}
		made = append(made, target)
		out[i].HostPath = target
	}
	return out, made, nil
}

// Layers attaches idmapped clones of an image's layers under dir, and
// returns them with the function that detaches them: an overlay made of
// them keeps its own references.
func Layers(dir string, layers []string, userns *os.File) ([]string, func(), error) {
	out := make([]string, 0, len(layers))
	done := func() {
		for _, l := range out {
			_ = unix.Unmount(l, unix.MNT_DETACH)
		}
		_ = RemoveMountPoints(dir, 1)
	}
	for i, l := range layers {
		target := filepath.Join(dir, strconv.Itoa(i))
		if err := Clone(l, target, userns); err != nil {
			done()
			return nil, nil, err
		}
		out = append(out, target)
	}
	return out, done, nil
}

// MountImage mounts an image's layers (base first) read-only at target, as
// an overlay of idmapped clones of them, mapped as userns maps, for an
// image volume of a pod in a user namespace of its own. The clones, under
// target.l, go once the overlay holds them.
func MountImage(target string, layers []string, userns *os.File) error {
	clones, done, err := Layers(target+".l", layers, userns)
	if err != nil {
		return err
	}
	defer done()
	return overlay.MountImage(target, clones)
}

// OpenDir makes the directory id below run, which the pod's root, an
// unprivileged user on the host, can search as every user can (not list):
// the directories from run down are opened for search, and a closed one
// above run is named.
func OpenDir(run, id string) (string, error) {
	dir := filepath.Join(run, id)
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return "", err
		}
		if st.Mode().Perm()&0o001 == 0 {
			if !strings.HasPrefix(d, run) {
				return "", fmt.Errorf("a pod in a user namespace cannot reach %s: %s is closed to other users (mode %o)", dir, d, st.Mode().Perm())
			}
			if err := os.Chmod(d, st.Mode().Perm()|0o111); err != nil {
				return "", err
			}
		}
		if d == "/" {
			return dir, nil
		}
	}
}

// RemoveMountPoints removes dir, which holds only mount points (and, depth
// levels down, directories of them), with unlink and rmdir alone: one still
// mounted stays, and nothing below a mount is ever touched.
func RemoveMountPoints(dir string, depth int) error {
	if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) || depth == 0 {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		errs = append(errs, RemoveMountPoints(filepath.Join(dir, e.Name()), depth-1))
	}
	errs = append(errs, os.Remove(dir))
	return errors.Join(errs...)
}

// Unmount detaches the clones (one already gone is no error) and removes
// dir.
func Unmount(dir string, clones []string) error {
	for _, c := range clones {
		if err := unmount.Detach(c); err != nil {
			return fmt.Errorf("unmounting %s: %w", c, err)
		}
	}
	return RemoveMountPoints(dir, 2)
}
