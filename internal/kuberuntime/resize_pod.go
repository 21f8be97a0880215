package kuberuntime

import (
	"context"
	"fmt"
	"slices"

	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
)

// A resize moves the pod cgroup in two steps, so it never holds less than
// a container inside it: first to the wider of the old and the new pod
// settings, before any container changes; then, once every running
// container has its new resources, to the new ones, which are then the
// pod-level resources in force. podCgroupTarget holds the second step, by
// pod UID, until it is done.

// raisePodCgroup is the first step, taken when a running container is about
// to be resized in place.
func (m *Manager) raisePodCgroup(ctx context.Context, pod *v1.Pod, sb *runtime.Sandbox, ps *runtime.PodStatus) error {
	if m.resources == nil || !m.ResizeInProgress(pod, ps) {
		return nil
	}
	want := podResources(pod, m.node)
	had := podResources(m.withApplied(pod), m.node)
	m.mu.Lock()
	prev, raised := m.podCgroupTarget[string(pod.UID)]
	m.mu.Unlock()
	if raised && prev == want {
		return nil
	}
	if err := m.checkPodMemoryDecrease(ctx, ps, had, want); err != nil {
		return &ResizeError{Err: err}
	}
	if err := m.rt.UpdateSandboxResources(ctx, sb.ID, widest(had, want)); err != nil {
		return &ResizeError{Err: fmt.Errorf("resizing the pod cgroup: %w", err)}
	}
	m.mu.Lock()
	m.podCgroupTarget[string(pod.UID)] = want
	m.mu.Unlock()
	return nil
}

// settlePodCgroup is the second step.
func (m *Manager) settlePodCgroup(ctx context.Context, pod *v1.Pod, sb *runtime.Sandbox, ps *runtime.PodStatus) error {
	m.mu.Lock()
	want, ok := m.podCgroupTarget[string(pod.UID)]
	m.mu.Unlock()
	if !ok || m.containersResizing(pod, ps) {
		return nil
	}
	if err := m.rt.UpdateSandboxResources(ctx, sb.ID, want); err != nil {
		return &ResizeError{Err: fmt.Errorf("resizing the pod cgroup: %w", err)}
	}
	if pod.Spec.Resources != nil {
		if err := m.resources.SetActuated(pod.UID, podLevel, *pod.Spec.Resources); err != nil {
			return err
		}
	}
	m.mu.Lock()
	delete(m.podCgroupTarget, string(pod.UID))
	m.mu.Unlock()
	return nil
}

// checkPodMemoryDecrease refuses a pod memory limit below what the pod's
// containers use now, as the kubelet does, before any of them is resized.
func (m *Manager) checkPodMemoryDecrease(ctx context.Context, ps *runtime.PodStatus, had, want runtime.Resources) error {
	if want.MemoryBytes == 0 || (had.MemoryBytes != 0 && want.MemoryBytes >= had.MemoryBytes) {
		return nil
	}
	var ids []string
	for _, c := range ps.Containers {
		if c.State == runtime.ContainerRunning {
			ids = append(ids, c.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	stats, err := m.rt.Stats(ctx, ids)
	if err != nil {
		return fmt.Errorf("cannot decrease memory limits: missing pod memory usage: %w", err)
	}
	var usage uint64
	for _, s := range stats {
		usage += s.MemoryUsageBytes
	}
	if usage >= uint64(want.MemoryBytes) {
		return fmt.Errorf("cannot decrease memory limits: attempting to set pod memory limit (%d) below current usage (%d)", want.MemoryBytes, usage)
	}
	return nil
}

// PodCgroup are the settings the pod's cgroup holds (the pod is its
// allocated version): what was last applied to it and to its containers.
func (m *Manager) PodCgroup(pod *v1.Pod) runtime.Resources {
	if m.resources == nil {
		return podResources(pod, m.node)
	}
	return podResources(m.withApplied(pod), m.node)
}

// withApplied is the pod with its own and each container's resources as
// last applied: a view to read, which shares all but its container lists
// with pod (it is made for every status the pod gets).
func (m *Manager) withApplied(pod *v1.Pod) *v1.Pod {
	out := *pod
	out.Spec.InitContainers = slices.Clone(pod.Spec.InitContainers)
	out.Spec.Containers = slices.Clone(pod.Spec.Containers)
	if r, ok := m.resources.Actuated(pod.UID, podLevel); ok {
		out.Spec.Resources = &r
	}
	for _, list := range [][]v1.Container{out.Spec.InitContainers, out.Spec.Containers} {
		for i := range list {
			if r, ok := m.resources.Actuated(pod.UID, list[i].Name); ok {
				list[i].Resources = r
			}
		}
	}
	return &out
}

// widest holds both a and b: the larger shares, and no limit where either
// has none.
func widest(a, b runtime.Resources) runtime.Resources {
	out := a
	out.CPUShares = max(a.CPUShares, b.CPUShares)
	out.CPUMillis = widerLimit(a.CPUMillis, b.CPUMillis)
	out.MemoryBytes = widerLimit(a.MemoryBytes, b.MemoryBytes)
	out.OOMScoreAdj = nil
	return out
}

func widerLimit(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	return max(a, b)
}
