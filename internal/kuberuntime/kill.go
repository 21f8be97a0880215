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
	grace := gracePeriod(pod, graceOverride)
	podIP := m.podIP(pod, ps.Sandbox())
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, c := range running {
		wg.Add(1)
		go func(c runtime.Container) {
			defer wg.Done()
			if err := m.killContainer(ctx, pod, &c, grace, podIP, "", order); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}(c)
	}
	wg.Wait()
	return utilerrors.NewAggregate(errs)
}

// minimumGracePeriod is the least time a container gets between SIGTERM and
// SIGKILL, as the kubelet's minimumGracePeriodInSeconds: after a preStop hook
// or a wait for its turn that used up the grace period, and for a forced
// deletion (grace 0) or an orphan's removal. A container whose stop signal
// cannot reach a handler does not get it (see stopWindow).
const minimumGracePeriod = 2 * time.Second

// killContainer stops one container as the kubelet's killContainer does: a
// Killing event (message, or "Stopping container <name>"), the preStop hook
// bounded by the grace period and counted against it, the wait for its turn
// when order is set (sidecars), then SIGTERM and SIGKILL after what is left
// of the grace (see stopWindow).
func (m *Manager) killContainer(ctx context.Context, pod *v1.Pod, c *runtime.Container, grace time.Duration, podIP, message string, order *terminationOrdering) error {
	spec := containerSpec(pod, c.Name)
	if message == "" {
		message = "Stopping container " + c.Name
	}
	m.event(pod, v1.EventTypeNormal, "Killing", "%s", message)
	if spec != nil && spec.Lifecycle != nil && spec.Lifecycle.PreStop != nil && grace > 0 && c.State == runtime.ContainerRunning && m.hooks != nil {
		grace -= m.runPreStop(ctx, pod, spec, c.ID, podIP, grace)
		if err := ctx.Err(); err != nil {
			// Cut short by a shorter grace period: the caller starts over
			// with it.
			return err
		}
	}
	if order != nil && grace > 0 {
		grace -= order.waitForTurn(c.Name, grace)
	}
	err := m.rt.StopContainer(ctx, c.ID, m.stopWindow(ctx, c.ID, grace))
	if err != nil && !errors.Is(err, runtime.ErrNotFound) {
		return err
	}
	if order != nil {
		order.containerTerminated(c.Name)
	}
	return nil
}

// stopWindow is the time between the stop signal and SIGKILL: what is left
// of the grace period, never less than the kubelet's minimum window. That
// window is there for the container's stop signal handler; when the kernel
// will drop the signal (an init process without a handler), it could only
// end in SIGKILL, so there is none.
func (m *Manager) stopWindow(ctx context.Context, id string, grace time.Duration) time.Duration {
	if grace >= minimumGracePeriod {
		return grace
	}
	if m.caps.SignalCheck && m.rt.StopSignalLost(ctx, id) {
		m.log.WithField("containerID", id).Debug("the container's init has no handler for its stop signal: killed without the minimum window")
		return 0
	}
	return minimumGracePeriod
}

// RemovePod removes every sandbox of the pod, with its containers, then what
// the backend keeps of the pod beside them (ReleasePod), and the pod's
// hosts file and resolv.conf.
func (m *Manager) RemovePod(ctx context.Context, ps *runtime.PodStatus) error {
	err := m.removeAll(ctx, ps)
	if err == nil && ps != nil && ps.UID != "" {
		m.removeNetworkFiles(ps.UID)
	}
	return err
}

// ReleasePod removes what the backend keeps for a pod that is gone beside
// its sandboxes, its pod cgroup (the kubelet's cleanupOrphanedPodCgroups).
func (m *Manager) ReleasePod(ctx context.Context, uid string) error {
	return m.rt.ReleasePod(ctx, uid)
}

func (m *Manager) removeAll(ctx context.Context, ps *runtime.PodStatus) error {
	var errs []error
	for _, sb := range ps.Sandboxes {
		if err := m.rt.RemoveSandbox(ctx, sb.ID); err != nil && !errors.Is(err, runtime.ErrNotFound) {
			errs = append(errs, err)
		} else if err := m.detachNetwork(ctx, sb.NetNS); err != nil {
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
		// Before the pod's directory goes: housekeeping releases what the
		// backend keeps of a pod only once it finds the directory of one
		// that is gone. A cgroup that stays is logged, not a reason to keep
		// the pod from its deletion.
		if ps.UID != "" {
			if err := m.ReleasePod(ctx, ps.UID); err != nil {
				m.log.WithError(err).WithField("podUID", ps.UID).Warn("removing the pod cgroup failed")
			}
		}
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
