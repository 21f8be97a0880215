package kuberuntime

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/runlet/runlet/internal/podutil"
	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// KillPod stops every running container of the pod, as the kubelet's
// killContainersWithSyncResult: all at once, each within the grace period
// (SIGTERM, then SIGKILL), except that sidecars stop after the regular
// containers, in reverse order, within the same grace period.
func (m *Manager) KillPod(ctx context.Context, pod *v1.Pod, ps *runtime.PodStatus, graceOverride *int64) error {
	var running []runtime.Container
	for _, c := range ps.Containers {
		if c.State == runtime.ContainerRunning || c.State == runtime.ContainerCreated {
			running = append(running, c)
		}
	}
	var order *terminationOrdering
	if podutil.HasRestartableInitContainer(&pod.Spec) {
		names := make([]string, 0, len(running))
		for _, c := range running {
			names = append(names, c.Name)
		}
		order = newTerminationOrdering(pod, names)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, c := range running {
		wg.Add(1)
		go func(c runtime.Container) {
			defer wg.Done()
			if err := m.killContainer(ctx, pod, c, graceOverride, order); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}(c)
	}
	wg.Wait()
	return utilerrors.NewAggregate(errs)
}

// minimumTurnGrace is the least time a container gets once it waited for its
// turn to stop (the kubelet's minimumGracePeriodInSeconds): a sidecar whose
// turn comes at the very end of the grace period still gets a SIGTERM first.
const minimumTurnGrace = 2 * time.Second

// killContainer stops one container, as the kubelet's killContainer: the
// grace period, less the wait for its turn when order is set, between
// SIGTERM and SIGKILL.
func (m *Manager) killContainer(ctx context.Context, pod *v1.Pod, c runtime.Container, graceOverride *int64, order *terminationOrdering) error {
	grace := gracePeriod(pod, graceOverride)
	m.event(pod, v1.EventTypeNormal, "Killing", "Stopping container %s", c.Name)
	if order != nil && grace > 0 {
		grace = max(grace-order.waitForTurn(c.Name, grace), minimumTurnGrace)
	}
	err := m.rt.StopContainer(ctx, c.ID, grace)
	if err != nil && !errors.Is(err, runtime.ErrNotFound) {
		return err
	}
	if order != nil {
		order.containerTerminated(c.Name)
	}
	return nil
}

// RemovePod removes every sandbox of the pod, with its containers, and the
// pod's hosts file and resolv.conf.
func (m *Manager) RemovePod(ctx context.Context, ps *runtime.PodStatus) error {
	err := m.removeAll(ctx, ps)
	if err == nil && ps != nil && ps.UID != "" {
		m.removeNetworkFiles(ps.UID)
	}
	return err
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
	if len(errs) == 0 {
		// Only once its containers are gone: their files go with them.
		if err := m.removePodFiles(ps.UID); err != nil {
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
