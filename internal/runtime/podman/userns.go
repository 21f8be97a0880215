package podman

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"

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
	_, ips, err := cfg.AttachNetwork(ctx, fmt.Sprintf("/proc/%d/ns/net", ic.State.Pid))
	return ips, err
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
// directory (empty for other pods).
func (b *Backend) idmappedMounts(ctx context.Context, meta sandboxMeta, mounts []runtime.Mount) ([]runtime.Mount, string, error) {
	if meta.labels[labelUserNS] == "" {
		return mounts, "", nil
	}
	ic, err := b.client.InspectContainer(ctx, meta.infraID)
	if err != nil {
		return nil, "", wrapf(err, "inspecting the pod's infra container")
	}
	userns, err := os.Open(fmt.Sprintf("/proc/%d/ns/user", ic.State.Pid))
	if err != nil {
		return nil, "", fmt.Errorf("opening the pod's user namespace: %w", err)
	}
	defer userns.Close()
	dir, err := idmap.OpenDir(b.opts.UserNSDir, randomName())
	if err != nil {
		return nil, "", err
	}
	out, made, err := idmap.Mounts(dir, mounts, userns)
	if err != nil {
		_ = idmap.Unmount(dir, made)
		return nil, "", err
	}
	b.mu.Lock()
	if b.idmapped == nil {
		b.idmapped = map[string]idmapped{}
	}
	b.idmapped[dir] = idmapped{dir: dir, clones: made}
	b.mu.Unlock()
	return out, dir, nil
}

// idmapped are a container's clones, kept until it has started.
type idmapped struct {
	dir    string
	clones []string
}

// releaseIDMapped detaches the clones made under key (a container's ID once
// created, else its directory): runc has bound them into the container by
// then, or the container will not run.
func (b *Backend) releaseIDMapped(key string) {
	b.mu.Lock()
	m, ok := b.idmapped[key]
	delete(b.idmapped, key)
	b.mu.Unlock()
	if ok {
		if err := idmap.Unmount(m.dir, m.clones); err != nil {
			b.opts.Logf("releasing the idmapped mounts of a container: %v", err)
		}
	}
}

// keyIDMapped files the clones made in dir under the container's ID.
func (b *Backend) keyIDMapped(dir, id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if m, ok := b.idmapped[dir]; ok {
		delete(b.idmapped, dir)
		b.idmapped[id] = m
	}
}

func randomName() string {
	r := make([]byte, 8)
	_, _ = rand.Read(r)
	return hex.EncodeToString(r)
}
