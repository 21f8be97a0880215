package podman

import (
	"context"
	"errors"

	"github.com/runlet/runlet/internal/runtime"
)

// inspectPod reads one pod: its inspect names its members and their states,
// and each member but the infra container is inspected. podman's
// containers/json, even filtered on a label, reads the configuration of
// every container on the host before it filters, so a per-pod refresh that
// lists costs in proportion to all pods; this costs in proportion to the pod.
func (b *Backend) inspectPod(ctx context.Context, id string) ([]runtime.Sandbox, []runtime.Container, error) {
	pod, err := b.client.InspectPod(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	infraState := ""
	var ctrs []runtime.Container
	for _, m := range pod.Containers {
		if m.ID == pod.InfraContainerID {
			infraState = m.State
			continue
		}
		ic, err := b.client.InspectContainer(ctx, m.ID)
		if errors.Is(err, runtime.ErrNotFound) {
			continue // removed since the pod was read
		}
		if err != nil {
			return nil, nil, wrapf(err, "inspecting container %s", shortID(m.ID))
		}
		d := b.remember(ic, inspectKey(ic))
		c := fromInspect(ic)
		c.OOMKilled = d.oomKilled || b.ooms.WasKilled(ic.ID)
		ctrs = append(ctrs, c)
	}
	if pod.InfraContainerID == "" {
		return nil, ctrs, nil
	}
	meta, err := b.sandboxMeta(ctx, id, pod.InfraContainerID)
	if err != nil {
		return nil, nil, err
	}
	l := meta.labels
	sb := runtime.Sandbox{ID: id, PodUID: l[runtime.LabelPodUID], Namespace: l[runtime.LabelPodNamespace],
		Name: l[runtime.LabelPodName], State: runtime.SandboxNotReady, NetNS: l[labelNetNS], CreatedAt: meta.created, Labels: l}
	if sandboxReady(infraState, l) {
		sb.State, sb.IPs = runtime.SandboxReady, meta.ips
	}
	return []runtime.Sandbox{sb}, ctrs, nil
}

// runningSandboxOf is the podman pod of the pod UID whose sandbox was last
// seen running, if any.
func (b *Backend) runningSandboxOf(uid string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id, m := range b.sandboxes {
		if m.labels[runtime.LabelPodUID] == uid {
			return id
		}
	}
	return ""
}

// forgetSandbox drops the cached metadata of a pod that is gone.
func (b *Backend) forgetSandbox(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.sandboxes, id)
}
