package podman

import (
	"context"
	"fmt"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/cgroups"
)

// UpdateSandboxResources implements runtime.Runtime. podman 4 cannot change
// a pod's cgroup once made (pod update came with podman 5), so its files
// are written here, as the kubelet's pod cgroup manager writes its own.
func (b *Backend) UpdateSandboxResources(ctx context.Context, id string, r runtime.Resources) error {
	if b.host.Remote {
		return fmt.Errorf("the pod cgroup of sandbox %s is on another host", shortID(id))
	}
	ip, err := b.client.InspectPod(ctx, id)
	if err != nil {
		return wrapf(err, "inspecting sandbox %s", shortID(id))
	}
	if ip.CgroupPath == "" {
		return fmt.Errorf("sandbox %s has no cgroup of its own", shortID(id))
	}
	// The settings a container update would state, written as files.
	return cgroups.WritePod(cgroups.Root, ip.CgroupPath, b.cg, cgroups.UpdateResources(r, b.cg))
}
