package runc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/runlet/runlet/internal/runtime"
	"golang.org/x/sys/unix"
)

// A pod in a user namespace of its own sees what root owns on the host as
// root's through idmapped mounts, as containerd gives such pods: of each
// image layer under its containers' root filesystems, and of each file
// and directory bound into them. runc (1.1) makes none itself, so the
// backend attaches idmapped clones, with the root filesystem, in a
// directory of the container's below Options.RunDir, where runc's init,
// running as the pod's root, can reach them.

// podUserNS opens the pod's user namespace, which the pause process owns.
func podUserNS(sb *sandboxRecord) (*os.File, error) {
	f, err := os.Open(sb.Pause.NS("user"))
	if err != nil {
		return nil, fmt.Errorf("opening the pod's user namespace: %w", err)
	}
	return f, nil
}

// idmapClone attaches at target an idmapped clone of the mount of source
// (a directory or a file; not the mounts below it).
func idmapClone(source, target string, userns *os.File) error {
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
	if st.IsDir() {
		return os.MkdirAll(target, 0o755)
	}
	f, err := os.OpenFile(target, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// idmapLayers attaches idmapped clones of an image's layers under dir, and
// returns them with the function that detaches them: an overlay made of
// them keeps its own references.
func idmapLayers(dir string, layers []string, userns *os.File) ([]string, func(), error) {
	out := make([]string, 0, len(layers))
	done := func() {
		for _, l := range out {
			_ = unix.Unmount(l, unix.MNT_DETACH)
		}
		_ = removeMountPoints(dir, 1)
	}
	for i, l := range layers {
		target := filepath.Join(dir, strconv.Itoa(i))
		if err := idmapClone(l, target, userns); err != nil {
			done()
			return nil, nil, err
		}
		out = append(out, target)
	}
	return out, done, nil
}

// userNSMounts gives a container of a pod in a user namespace of its own
// idmapped clones of its bind mounts and of the pod's /dev/shm, attached in
// the bundle, and returns the config and shm its spec is built from.
func (b *Backend) userNSMounts(rec *containerRecord, sb *sandboxRecord, userns *os.File) (runtime.ContainerConfig, string, error) {
	cfg := rec.Config
	cfg.Mounts = append([]runtime.Mount(nil), cfg.Mounts...)
	clone := func(source string) (string, error) {
		target := filepath.Join(rec.MountDir, "m", strconv.Itoa(len(rec.IDMapped)))
		if err := idmapClone(source, target, userns); err != nil {
			return "", err
		}
		rec.IDMapped = append(rec.IDMapped, target)
		return target, nil
	}
	for i, m := range cfg.Mounts {
		if m.HostPath == "" {
			continue
		}
		target, err := clone(m.HostPath)
		if err != nil {
			return cfg, "", fmt.Errorf("mount at %s: %w", m.ContainerPath, err)
		}
		cfg.Mounts[i].HostPath = target
	}
	shm := sb.Shm
	if shm != "" {
		var err error
		if shm, err = clone(shm); err != nil {
			return cfg, "", fmt.Errorf("the pod's /dev/shm: %w", err)
		}
	}
	return cfg, shm, nil
}

// openMountDir makes the container's directory below Options.RunDir, which
// the pod's root, an unprivileged user on the host, can search as every
// user can (not list); a closed directory above it is named.
func (b *Backend) openMountDir(id string) (string, error) {
	dir := filepath.Join(b.opts.RunDir, id)
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return "", err
		}
		if st.Mode().Perm()&0o001 == 0 {
			if !strings.HasPrefix(d, b.opts.RunDir) {
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

// removeMountPoints removes dir, which holds only mount points (and, depth
// levels down, directories of them), with unlink and rmdir alone: one still
// mounted stays, and nothing below a mount is ever touched.
func removeMountPoints(dir string, depth int) error {
	if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) || depth == 0 {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		errs = append(errs, removeMountPoints(filepath.Join(dir, e.Name()), depth-1))
	}
	errs = append(errs, os.Remove(dir))
	return errors.Join(errs...)
}

// chownToPod gives the pod's root a directory the pod writes to.
func chownToPod(dir string, u *runtime.UserNamespace) error {
	uid, gid := u.HostRoot()
	if err := os.Chown(dir, int(uid), int(gid)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// layerSource gives the layers a root filesystem or an image volume is made
// of: the image's own, or idmapped clones of them for a pod in a user
// namespace of its own.
type layerSource interface {
	// prepare returns the layer directories to mount, made under dir if
	// need be, and what undoes that once they are mounted.
	prepare(dir string, layers []string) ([]string, func(), error)
	// ownUpper makes the writable layer, owned by the pod's root.
	ownUpper(dir string) error
}

type plainLayers struct{}

func (plainLayers) prepare(_ string, layers []string) ([]string, func(), error) {
	return layers, func() {}, nil
}

func (plainLayers) ownUpper(string) error { return nil }

type idmappedLayers struct {
	userns *os.File
	ns     *runtime.UserNamespace
}

func (l idmappedLayers) prepare(dir string, layers []string) ([]string, func(), error) {
	return idmapLayers(dir, layers, l.userns)
}

func (l idmappedLayers) ownUpper(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return chownToPod(dir, l.ns)
}

// mountImageWith mounts an image volume's layers, as layers gives them.
func mountImageWith(target string, dirs []string, layers layerSource) error {
	lower, done, err := layers.prepare(target+".l", dirs)
	if err != nil {
		return err
	}
	defer done()
	return mountImage(target, lower)
}
