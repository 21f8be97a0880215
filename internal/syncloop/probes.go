package syncloop

import (
	"github.com/runlet/runlet/internal/prober"
	"github.com/runlet/runlet/internal/prober/results"
	"github.com/runlet/runlet/internal/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Prober is the probe manager as the loop drives it: workers start with a
// pod's syncs and stop with its termination (internal/prober.Manager).
type Prober interface {
	AddPod(pod *v1.Pod)
	StopLivenessAndStartup(pod *v1.Pod)
	RemovePod(pod *v1.Pod)
	CleanupPods(desired map[types.UID]bool)
	status.ContainerProbes
}

// handleProbeResult acts on a changed probe result as the kubelet's syncLoop
// does: readiness and startup go into the pod's status at once (its worker
// may be busy terminating it), and the pod is synced, which restarts a
// container that failed its liveness or startup probe.
func (l *Loop) handleProbeResult(u prober.Update) {
	switch u.Type {
	case prober.Readiness:
		l.cfg.Status.SetContainerReadiness(u.PodUID, u.ContainerID, u.Result == results.Success)
	case prober.Startup:
		l.cfg.Status.SetContainerStartup(u.PodUID, u.ContainerID, u.Result == results.Success)
	case prober.Liveness:
		if u.Result != results.Failure {
			return
		}
	}
	l.dispatch(u.PodUID, SyncPodSync)
}

// probes is what the status generator asks about started and ready; nil
// when no prober runs.
func (l *Loop) probes() status.ContainerProbes {
	if l.cfg.Prober == nil {
		return nil
	}
	return l.cfg.Prober
}
