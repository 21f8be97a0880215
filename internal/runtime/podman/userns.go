package podman

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/runlet/runlet/internal/netns"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/idmap"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
)

// A pod with a user namespace of its own (hostUsers: false) is a podman pod
// with ID mappings: its infra container makes the user namespace, and in it
// the pod's network namespace, which its containers share (a namespace can
// only be joined from the user namespace that owns it). The core's pod
// network is attached to that namespace once the infra runs, at the path
// the core chose, which the pod's labels hold; its addresses are read from
// the namespace, as podman's labels cannot change. Bind mounts are
// idmapped clones (package idmap) attached below Options.UserNSDir, where
// the pod's root reaches them, until the container has started.

// labelUserNS marks a pod with a user namespace of its own.
const labelUserNS = "io.runlet.sandbox.userns"

// DefaultUserNSDir is Options.UserNSDir's default.
const DefaultUserNSDir = "/run/runlet/podman"

// shareUserNSDir makes Options.UserNSDir a shared mount, as /run/netns is
// made one: a runlet in a pod (the chart) mounts it from the host with
// Bidirectional propagation, which brings the clones it attaches there to
// the host's podman only from a shared mount (systemd's /run is one; other
// hosts' may not be).
func (b *Backend) shareUserNSDir() {
	if b.remote {
		return
	}
	if err := netns.EnsureSharedDir(b.opts.UserNSDir); err != nil {
		b.opts.Logf("pods with hostUsers: false: %v", err)
	}
}

// podIDMappings are the pod's mappings in libpod's terms.
func podIDMappings(u *runtime.UserNamespace) *libpod.IDMappings {
	conv := func(m []runtime.IDMapping) []libpod.IDMap {
		out := make([]libpod.IDMap, 0, len(m))
		for _, e := range m {
			out = append(out, libpod.IDMap{ContainerID: int(e.ContainerID), HostID: int(e.HostID), Size: int(e.Length)})
		}
		return out
	}
	return &libpod.IDMappings{UIDMap: conv(u.UIDs), GIDMap: conv(u.GIDs)}
}

// startUserNSPod starts the pod's infra and attaches the core's network to
// the namespace it made; it returns the pod's addresses.
func (b *Backend) startUserNSPod(ctx context.Context, id, infra string, cfg runtime.SandboxConfig) ([]string, error) {
	if err := b.client.StartPod(ctx, id); err != nil {
		return nil, infraHint(err)
	}
	ic, err := b.client.InspectContainer(ctx, infra)
	if err != nil {
		return nil, err
	}
	if ic.State.Pid <= 0 {
		return nil, fmt.Errorf("the pod's infra container %s does not run", shortID(ic.ID))
	}
	return cfg.AttachNetwork(ctx, fmt.Sprintf("/proc/%d/ns/net", ic.State.Pid))
}

// userNSAddresses are the addresses of a pod with a user namespace of its
// own: those of its interface in the namespace its labels name.
func userNSAddresses(labels map[string]string) []string {
	if labels[labelUserNS] == "" || labels[labelNetNS] == "" {
		return nil
	}
	ips, err := netns.Addresses(labels[labelNetNS], "eth0")
	if err != nil {
		return nil
	}
	return ips
}

// idmappedMounts gives a container of a pod with a user namespace of its
// own idmapped clones of its bind mounts, in a new directory below
// Options.UserNSDir, and returns the mounts to create it with and the
// clones (none for other pods).
func (b *Backend) idmappedMounts(ctx context.Context, meta sandboxMeta, mounts []runtime.Mount) ([]runtime.Mount, idmapped, error) {
	if meta.labels[labelUserNS] == "" {
		return mounts, idmapped{}, nil
	}
	ic, err := b.client.InspectContainer(ctx, meta.infraID)
	if err != nil {
		return nil, idmapped{}, wrapf(err, "inspecting the pod's infra container")
	}
	userns, err := os.Open(fmt.Sprintf("/proc/%d/ns/user", ic.State.Pid))
	if err != nil {
		return nil, idmapped{}, fmt.Errorf("opening the pod's user namespace: %w", err)
	}
	defer userns.Close()
	dir, err := idmap.OpenDir(b.opts.UserNSDir, randomName())
	if err != nil {
		return nil, idmapped{}, err
	}
	out, made, err := idmap.Mounts(dir, mounts, userns)
	m := idmapped{dir: dir, clones: made}
	if err == nil {
		out, made, err = b.idmappedImages(ctx, dir, out, userns)
		m.clones = append(m.clones, made...)
	}
	if err != nil {
		m.release(b.opts.Logf)
		return nil, idmapped{}, err
	}
	return out, m, nil
}

// idmappedImages mounts a container's image volumes itself, below dir/i,
// and returns its mounts with those as read-only bind mounts: podman 4
// mounts an image volume from within the pod's user namespace, where the
// kernel refuses an overlay of root's layers. Each is an overlay of
// idmapped clones of the image's layers.
func (b *Backend) idmappedImages(ctx context.Context, dir string, mounts []runtime.Mount, userns *os.File) ([]runtime.Mount, []string, error) {
	out := slices.Clone(mounts)
	var made []string
	for i, m := range out {
		if m.Image == "" {
			continue
		}
		if m.SubPath != "" && !filepath.IsLocal(m.SubPath) {
			return out, made, fmt.Errorf("image volume %s: subPath %q leaves the image", m.Image, m.SubPath)
		}
		target := filepath.Join(dir, "i", strconv.Itoa(len(made)))
		if err := b.mountImage(ctx, target, m.Image, userns); err != nil {
			return out, made, fmt.Errorf("image volume %s at %s: %w", m.Image, m.ContainerPath, err)
		}
		made = append(made, target)
		out[i] = runtime.Mount{HostPath: filepath.Join(target, m.SubPath), ContainerPath: m.ContainerPath, ReadOnly: true}
	}
	return out, made, nil
}

// mountImage mounts the image ref, its layers idmapped as userns maps, at
// target.
func (b *Backend) mountImage(ctx context.Context, target, ref string, userns *os.File) error {
	img, err := b.client.InspectImage(ctx, ref)
	if err != nil {
		return err
	}
	d := img.GraphDriver.Data
	if d.UpperDir == "" {
		return fmt.Errorf("podman's storage driver gives no layer directories (an overlay driver does)")
	}
	var layers []string
	if d.LowerDir != "" {
		layers = strings.Split(d.LowerDir, ":")
		slices.Reverse(layers)
	}
	return idmap.MountImage(target, append(layers, d.UpperDir), userns)
}

// idmapped are a container's clones, kept until it has started: runc has
// bound them into the container by then, or the container will not run.
type idmapped struct {
	dir    string
	clones []string
}

// release detaches the clones and removes their directory.
func (m idmapped) release(logf func(string, ...any)) {
	if m.dir == "" {
		return
	}
	if err := idmap.Unmount(m.dir, m.clones); err != nil {
		logf("releasing the idmapped mounts of a container: %v", err)
	}
}

// keepIDMapped holds a created container's clones until its start.
func (b *Backend) keepIDMapped(id string, m idmapped) {
	if m.dir == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.idmapped == nil {
		b.idmapped = map[string]idmapped{}
	}
	b.idmapped[id] = m
}

// releaseIDMapped releases the clones held for a container, if any.
func (b *Backend) releaseIDMapped(id string) {
	b.mu.Lock()
	m := b.idmapped[id]
	delete(b.idmapped, id)
	b.mu.Unlock()
	m.release(b.opts.Logf)
}

func randomName() string {
	r := make([]byte, 8)
	_, _ = rand.Read(r)
	return hex.EncodeToString(r)
}
