package kuberuntime

import (
	"context"
	"fmt"
	"time"

	"github.com/runlet/runlet/internal/prober/results"
	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
)

// killUnhealthy kills a running container that failed its liveness or
// startup probe, as the kubelet's computePodActions decides: the Killing
// event says why and whether it will be restarted, and the probe's own
// terminationGracePeriodSeconds, if set, replaces the pod's. The restart
// itself is the next sync's, under the restart back-off like any exit.
func (m *Manager) killUnhealthy(ctx context.Context, pod *v1.Pod, c *v1.Container, cur *runtime.Container, sb *runtime.Sandbox) (killed bool, err error) {
	var (
		probe  *v1.Probe
		reason string
	)
	switch {
	case failed(m.liveness, cur.ID):
		probe, reason = c.LivenessProbe, "liveness"
	case failed(m.startup, cur.ID):
		probe, reason = c.StartupProbe, "startup"
	default:
		return false, nil
	}
	msg := fmt.Sprintf("Container %s failed %s probe", c.Name, reason)
	if restartsOnProbeFailure(pod, c) {
		msg += ", will be restarted"
	}
	grace := gracePeriod(pod, nil)
	if probe != nil && probe.TerminationGracePeriodSeconds != nil && pod.DeletionGracePeriodSeconds == nil {
		grace = time.Duration(*probe.TerminationGracePeriodSeconds) * time.Second
	}
	return true, m.killContainer(ctx, pod, cur, grace, m.podIP(pod, sb), msg, nil)
}

func failed(r ProbeResults, id string) bool {
	if r == nil {
		return false
	}
	res, ok := r.Get(id)
	return ok && res == results.Failure
}

// restartsOnProbeFailure is whether a container killed for a failed probe
// runs again: its own restartPolicy if set (restart rules are not consulted
// for a running container), else the pod's unless Never.
func restartsOnProbeFailure(pod *v1.Pod, c *v1.Container) bool {
	if c.RestartPolicy != nil {
		return *c.RestartPolicy != v1.ContainerRestartPolicyNever
	}
	return pod.Spec.RestartPolicy != v1.RestartPolicyNever
}
