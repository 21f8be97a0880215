package podman

import (
	"context"
	"fmt"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/cgroups"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
)

// ownsPodCgroups reports whether runlet makes each pod's cgroup itself
// and has podman make its pod cgroup below it, as the kubelet's pod cgroup
// manager makes "pod<uid>" for its runtime: what looks for a pod's cgroup
// by UID finds it, and its limits can change in place (podman 4 cannot
// update a pod). It needs podman's cgroupfs manager (a systemd one takes
// slices) and the same cgroup tree as the service, so not a remote or
// rootless service, nor runlet in a container of its own cgroup view.
func ownsPodCgroups(info libpod.Info, remote bool) bool {
	return !remote && info.Host.CgroupManager == "cgroupfs" && !info.Host.Security.Rootless && cgroups.HostView()
}

func (b *Backend) podCgroup(path string) cgroups.PodCgroup {
	return cgroups.PodCgroup{Root: cgroups.Root, Path: path, Host: b.cg}
}

// ReleasePod implements runtime.Runtime: it destroys the pod cgroup runlet
// made, with podman's below it and what still runs there.
func (b *Backend) ReleasePod(_ context.Context, uid string) error {
	if !b.podCgroups {
		return nil
	}
	return cgroups.Destroy(cgroups.Root, cgroups.PodCgroupPath(uid))
}

// podCgroupOf finds the cgroup runlet made for a pod about to be removed,
// and the pod's ID, the name of podman's cgroup below it: from the cached
// labels, else from podman (id may be the pod's name). Empty: it has none.
func (b *Backend) podCgroupOf(ctx context.Context, id string) (path, podID string) {
	if b.remote {
		return "", ""
	}
	b.mu.Lock()
	m, ok := b.sandboxes[id]
	b.mu.Unlock()
	if uid := m.labels[runtime.LabelPodUID]; ok && uid != "" {
		if b.podCgroups {
			return cgroups.PodCgroupPath(uid), id
		}
		return "", ""
	}
	ip, err := b.client.InspectPod(ctx, id)
	if err != nil || !cgroups.IsPodCgroupPath(ip.CgroupParent) {
		return "", ""
	}
	return ip.CgroupParent, ip.ID
}

// UpdateSandboxResources implements runtime.Runtime. podman 4 cannot change
// a pod's cgroup once made (pod update came with podman 5), so its files
// are written here, as the kubelet's pod cgroup manager writes its own: in
// the pod cgroup runlet made, or else in podman's.
func (b *Backend) UpdateSandboxResources(ctx context.Context, id string, r runtime.Resources) error {
	if b.host.Remote {
		return fmt.Errorf("the pod cgroup of sandbox %s is on another host", shortID(id))
	}
	ip, err := b.client.InspectPod(ctx, id)
	if err != nil {
		return wrapf(err, "inspecting sandbox %s", shortID(id))
	}
	if cgroups.IsPodCgroupPath(ip.CgroupParent) {
		return b.podCgroup(ip.CgroupParent).Update(r)
	}
	if ip.CgroupPath == "" {
		return fmt.Errorf("sandbox %s has no cgroup of its own", shortID(id))
	}
	// The settings a container update would state, written as files.
	return cgroups.WritePod(cgroups.Root, ip.CgroupPath, b.cg, cgroups.UpdateResources(r, b.cg))
}
