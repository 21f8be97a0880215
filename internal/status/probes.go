package status

import (
	"time"

	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
)

// ContainerProbes says what the prober found of a running container. The
// prober's manager implements it; without one (nil) every running container
// counts as started and ready.
type ContainerProbes interface {
	// Started reports whether the container has started: its startup probe
	// succeeded, or it has none. containerID is the backend's ID.
	Started(pod *v1.Pod, c *v1.Container, containerID string, startedAt time.Time) bool
	// Ready reports whether the started container is ready: its readiness
	// probe succeeded, or it has none.
	Ready(pod *v1.Pod, c *v1.Container, containerID string, startedAt time.Time) bool
}

// runningState reports a running container's started and ready flags: a
// container that has not started is not ready, as on the kubelet.
func (in Input) runningState(spec *v1.Container, cur *runtime.Container) (started, ready bool) {
	if in.Probes == nil {
		return true, true
	}
	started = in.Probes.Started(in.Pod, spec, cur.ID, cur.StartedAt)
	return started, started && in.Probes.Ready(in.Pod, spec, cur.ID, cur.StartedAt)
}
