package kuberuntime

import (
	"context"
	"errors"
	"sync"

	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// KillPod stops every running container of the pod in parallel, each with
// the grace period (SIGTERM, then SIGKILL).
func (m *Manager) KillPod(ctx context.Context, pod *v1.Pod, ps *runtime.PodStatus, graceOverride *int64) error {
	grace := gracePeriod(pod, graceOverride)
	podIP := m.podIP(pod, ps.Sandbox())
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, c := range ps.Containers {
		if c.State != runtime.ContainerRunning && c.State != runtime.ContainerCreated {
			continue
		}
		wg.Add(1)
		go func(c runtime.Container) {
			defer wg.Done()
			if err := m.killContainer(ctx, pod, &c, grace, podIP, ""); err != nil && !errors.Is(err, runtime.ErrNotFound) {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}(c)
	}
	wg.Wait()
	return utilerrors.NewAggregate(errs)
}

// RemovePod removes every sandbox of the pod, with its containers.
func (m *Manager) RemovePod(ctx context.Context, ps *runtime.PodStatus) error {
	return m.removeAll(ctx, ps)
}

func (m *Manager) removeAll(ctx context.Context, ps *runtime.PodStatus) error {
	var errs []error
	for _, sb := range ps.Sandboxes {
		if err := m.rt.RemoveSandbox(ctx, sb.ID); err != nil && !errors.Is(err, runtime.ErrNotFound) {
			errs = append(errs, err)
		}
	}
	for _, c := range ps.Containers {
		if c.SandboxID != "" && hasSandbox(ps, c.SandboxID) {
			continue
		}
		if err := m.rt.RemoveContainer(ctx, c.ID); err != nil && !errors.Is(err, runtime.ErrNotFound) {
			errs = append(errs, err)
		}
	}
	return utilerrors.NewAggregate(errs)
}

func hasSandbox(ps *runtime.PodStatus, id string) bool {
	for _, sb := range ps.Sandboxes {
		if sb.ID == id {
			return true
		}
	}
	return false
}
