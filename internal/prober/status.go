package prober

import (
	"time"

	"github.com/runlet/runlet/internal/prober/results"
	"github.com/runlet/runlet/internal/status"
	v1 "k8s.io/api/core/v1"
)

var _ status.ContainerProbes = (*Manager)(nil)

// Started reports whether a running container has started, as the kubelet's
// prober manager decides it: the startup probe's result, or true when the
// container has no startup probe.
func (m *Manager) Started(pod *v1.Pod, c *v1.Container, containerID string, startedAt time.Time) bool {
	if r, ok := m.Startup.Get(containerID); ok {
		return r == results.Success
	}
	if m.adopted(startedAt) && apiStarted(pod, containerID) {
		// Started before runlet was: it keeps the flag it had.
		return true
	}
	_, probing := m.worker(pod.UID, c.Name, Startup)
	return !probing
}

// Ready reports whether a started, running container is ready: its readiness
// probe's result, or true when it has none. A container whose readiness is
// not known yet is probed at once.
func (m *Manager) Ready(pod *v1.Pod, c *v1.Container, containerID string, startedAt time.Time) bool {
	r, ok := m.Readiness.Get(containerID)
	if ok && r == results.Success {
		return true
	}
	w, probing := m.worker(pod.UID, c.Name, Readiness)
	if probing {
		w.probeNow()
	}
	ready := !probing
	if !ok && m.adopted(startedAt) {
		// A restart of runlet keeps a pod that was ready ready until its
		// probe says otherwise (setReadyStateOnKubeletRestart).
		ready = c.ReadinessProbe == nil || podWasReady(pod)
	}
	return ready
}

// adopted reports a container that ran before this runlet started.
func (m *Manager) adopted(startedAt time.Time) bool {
	return !startedAt.IsZero() && startedAt.Before(m.start.Add(-restartGrace))
}

// apiStarted reports the started flag the API holds for the container.
func apiStarted(pod *v1.Pod, containerID string) bool {
	for _, list := range [][]v1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for _, cs := range list {
			if backendID(cs.ContainerID) == containerID {
				return cs.Started != nil && *cs.Started
			}
		}
	}
	return false
}

func podWasReady(pod *v1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}
