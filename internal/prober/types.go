// Package prober runs the liveness, readiness and startup probes of pods'
// containers, as the kubelet's prober does: one long-lived worker per probe,
// started with the pod and stopped with it, writes its results into a
// results manager per probe type. The sync loop hears of changes through
// Updates; the status generator reads started and ready through the
// Manager; the runtime manager reads liveness and startup failures from the
// results managers and restarts the container.
package prober

import (
	"github.com/runlet/runlet/internal/prober/results"
	v1 "k8s.io/api/core/v1"
)

// ProbeType is liveness, readiness or startup.
type ProbeType int

// Probe types.
const (
	Liveness ProbeType = iota
	Readiness
	Startup
)

// String is the probe type as the kubelet's events name it.
func (t ProbeType) String() string {
	switch t {
	case Readiness:
		return "Readiness"
	case Liveness:
		return "Liveness"
	case Startup:
		return "Startup"
	}
	return "UNKNOWN"
}

func (t ProbeType) spec(c *v1.Container) *v1.Probe {
	switch t {
	case Liveness:
		return c.LivenessProbe
	case Readiness:
		return c.ReadinessProbe
	}
	return c.StartupProbe
}

// Update is a changed result of one container's probe.
type Update struct {
	results.Update
	Type ProbeType
}
