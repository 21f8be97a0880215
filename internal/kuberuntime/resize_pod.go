package kuberuntime

import (
	"context"
	"fmt"

	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
)

// A resize moves the pod cgroup in two steps, so it never holds less than
// a container inside it: first to the wider of the old and the new pod
// settings, before any container changes; then, once every running
// container has its new resources, to the new ones. podCgroupTarget holds
// the second step, by pod UID, until it is done.

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
	m.podCgroupTarget[string(pod.UID)] = want
	m.mu.Unlock()
	if raised && prev == want {
		return nil
	}
	if err := m.rt.UpdateSandboxResources(ctx, sb.ID, widest(had, want)); err != nil {
		return &ResizeError{Err: fmt.Errorf("resizing the pod cgroup: %w", err)}
	}
	return nil
}

// settlePodCgroup is the second step.
func (m *Manager) settlePodCgroup(ctx context.Context, pod *v1.Pod, sb *runtime.Sandbox, ps *runtime.PodStatus) error {
	m.mu.Lock()
	want, ok := m.podCgroupTarget[string(pod.UID)]
	m.mu.Unlock()
	if !ok || m.ResizeInProgress(pod, ps) {
		return nil
	}
	if err := m.rt.UpdateSandboxResources(ctx, sb.ID, want); err != nil {
		return &ResizeError{Err: fmt.Errorf("resizing the pod cgroup: %w", err)}
	}
	m.mu.Lock()
	delete(m.podCgroupTarget, string(pod.UID))
	m.mu.Unlock()
	return nil
}

// withApplied is the pod with each container's resources as last applied.
func (m *Manager) withApplied(pod *v1.Pod) *v1.Pod {
	out := pod.DeepCopy()
	for _, list := range [][]v1.Container{out.Spec.InitContainers, out.Spec.Containers} {
		for i := range list {
			if r, ok := m.resources.Actuated(pod.UID, list[i].Name); ok {
				list[i].Resources = r
			}
		}
	}
	return out
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
