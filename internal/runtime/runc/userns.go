package runc

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/idmap"
	"github.com/runlet/runlet/internal/runtime/overlay"
)

// A pod in a user namespace of its own gets its root filesystem and bind
// mounts idmapped (package idmap), attached in a directory of the
// container's below Options.RunDir, where runc's init, running as the
// pod's root, can reach them.

// podUserNS opens the pod's user namespace, which the pause process owns.
func podUserNS(sb *sandboxRecord) (*os.File, error) {
	f, err := os.Open(sb.Pause.NS("user"))
	if err != nil {
		return nil, fmt.Errorf("opening the pod's user namespace: %w", err)
	}
	return f, nil
}

// userNSMounts gives a container of a pod in a user namespace of its own
// idmapped clones of its bind mounts and of the pod's /dev/shm, and returns
// the config and shm its spec is built from.
func (b *Backend) userNSMounts(rec *containerRecord, sb *sandboxRecord, userns *os.File) (runtime.ContainerConfig, string, error) {
	cfg := rec.Config
	mounts := cfg.Mounts
	if sb.Shm != "" {
		mounts = append(slices.Clone(mounts), runtime.Mount{HostPath: sb.Shm, ContainerPath: "/dev/shm"})
	}
	out, made, err := idmap.Mounts(rec.MountDir, mounts, userns)
	rec.IDMapped = made
	if err != nil {
		return cfg, "", err
	}
	cfg.Mounts = out[:len(cfg.Mounts)]
	shm := ""
	if sb.Shm != "" {
		shm = out[len(out)-1].HostPath
	}
	return cfg, shm, nil
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
	// mountImage mounts an image volume's layers read-only at target.
	mountImage(target string, layers []string) error
	// ownUpper makes the writable layer, owned by the pod's root.
	ownUpper(dir string) error
}

type plainLayers struct{}

func (plainLayers) prepare(_ string, layers []string) ([]string, func(), error) {
	return layers, func() {}, nil
}

func (plainLayers) mountImage(target string, layers []string) error {
	return overlay.MountImage(target, layers)
}

func (plainLayers) ownUpper(string) error { return nil }

type idmappedLayers struct {
	userns *os.File
	ns     *runtime.UserNamespace
}

func (l idmappedLayers) prepare(dir string, layers []string) ([]string, func(), error) {
	return idmap.Layers(dir, layers, l.userns)
}

func (l idmappedLayers) mountImage(target string, layers []string) error {
	return idmap.MountImage(target, layers, l.userns)
}

func (l idmappedLayers) ownUpper(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return chownToPod(dir, l.ns)
}
