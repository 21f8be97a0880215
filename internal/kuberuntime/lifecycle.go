package kuberuntime

import (
	"context"
	"fmt"
	"time"

	"github.com/runlet/runlet/internal/prober/results"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/status"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
)

// HookRunner runs a container's lifecycle handler (internal/lifecycle).
type HookRunner interface {
	Run(ctx context.Context, pod *v1.Pod, c *v1.Container, containerID, podIP string, h *v1.LifecycleHandler) (string, error)
}

// ProbeResults holds one probe type's newest results by container ID
// (internal/prober/results).
type ProbeResults interface {
	Get(containerID string) (results.Result, bool)
}

// runPreStop runs the container's preStop hook for at most grace and returns
// how long it took. A failure is an event; the container is stopped anyway.
func (m *Manager) runPreStop(ctx context.Context, pod *v1.Pod, spec *v1.Container, id, podIP string, grace time.Duration) time.Duration {
	start := time.Now()
	hctx, cancel := context.WithTimeout(ctx, grace)
	defer cancel()
	_, err := m.hooks.Run(hctx, pod, spec, id, podIP, spec.Lifecycle.PreStop)
	log := m.log.WithFields(logrus.Fields{"pod": pod.Namespace + "/" + pod.Name, "container": spec.Name})
	switch {
	case err == nil:
	case ctx.Err() == nil && hctx.Err() == context.DeadlineExceeded:
		// Not a failure: the grace period is over, the container is stopped.
		log.WithField("grace", grace).Info("preStop hook not completed in the grace period")
	default:
		log.WithError(err).Info("preStop hook failed")
		// The message is not in the event, so secrets in it do not leak.
		m.event(pod, v1.EventTypeWarning, "FailedPreStopHook", "PreStopHook failed")
	}
	return time.Since(start)
}

// runPostStart runs the postStart hook of a container just started. A
// failure kills the container, which is then restarted per its policy, and
// it waits with reason PostStartHookError meanwhile.
func (m *Manager) runPostStart(ctx context.Context, pod *v1.Pod, c *v1.Container, id string, sb *runtime.Sandbox) error {
	if c.Lifecycle == nil || c.Lifecycle.PostStart == nil || m.hooks == nil {
		return nil
	}
	podIP := m.podIP(pod, sb)
	msg, err := m.hooks.Run(ctx, pod, c, id, podIP, c.Lifecycle.PostStart)
	if err == nil {
		return nil
	}
	m.event(pod, v1.EventTypeWarning, "FailedPostStartHook", "PostStartHook failed")
	cur := &runtime.Container{ID: id, Name: c.Name, State: runtime.ContainerRunning}
	if kerr := m.killContainer(ctx, pod, cur, gracePeriod(pod, nil), podIP, "FailedPostStartHook", nil); kerr != nil {
		m.log.WithError(kerr).WithField("container", id).Warn("killing a container whose postStart hook failed")
	}
	m.setWaiting(string(pod.UID), c.Name, &status.Waiting{Reason: "PostStartHookError", Message: msg})
	return fmt.Errorf("postStart hook of container %s: %w", c.Name, err)
}

// podIP is where a hook's HTTP request without a host goes: the sandbox's
// IP, or the node's for a pod on the host's network.
func (m *Manager) podIP(pod *v1.Pod, sb *runtime.Sandbox) string {
	if sb != nil && len(sb.IPs) > 0 && !pod.Spec.HostNetwork {
		return sb.IPs[0]
	}
	if len(m.hostIPs) > 0 {
		return m.hostIPs[0]
	}
	return ""
}

// containerSpec finds a container of the pod by name, init containers included.
func containerSpec(pod *v1.Pod, name string) *v1.Container {
	for _, list := range [][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}
