package prober

import (
	"context"
	"sync"
	"time"

	"github.com/runlet/runlet/internal/probe"
	"github.com/runlet/runlet/internal/prober/results"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
)

// StatusProvider is where workers read a pod's newest status: container IDs,
// states, started flags and the pod IP (status.Manager).
type StatusProvider interface {
	PodStatus(uid types.UID) (v1.PodStatus, bool)
}

// Config wires a Manager.
type Config struct {
	// Exec runs exec probes in containers (the backend).
	Exec     probe.Execer
	Status   StatusProvider
	Recorder record.EventRecorder
	Log      logrus.FieldLogger
	// Clock is the workers' clock; nil is the real one.
	Clock clock.Clock
}

// Manager keeps one worker per probe of every container of the pods it was
// given, and the results they find.
type Manager struct {
	// Liveness, Readiness and Startup hold the results by container ID.
	Liveness, Readiness, Startup *results.Manager

	status StatusProvider
	prober *prober
	log    logrus.FieldLogger
	clock  clock.Clock
	start  time.Time
	// ctx parents every worker's context; cancel stops them all.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.RWMutex
	workers map[probeKey]*worker

	updates chan Update
}

type probeKey struct {
	podUID    types.UID
	container string
	probeType ProbeType
}

// NewManager returns a manager; Run must be started for its updates to flow.
func NewManager(cfg Config) *Manager {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	if cfg.Log == nil {
		cfg.Log = logrus.StandardLogger()
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{
		Liveness: results.NewManager(), Readiness: results.NewManager(), Startup: results.NewManager(),
		status: cfg.Status, prober: newProber(cfg.Exec, cfg.Recorder, cfg.Log), log: cfg.Log,
		clock: cfg.Clock, start: cfg.Clock.Now(), ctx: ctx, cancel: cancel,
		workers: map[probeKey]*worker{}, updates: make(chan Update),
	}
}

// Updates delivers every changed result, of all three probe types.
func (m *Manager) Updates() <-chan Update { return m.updates }

// Run forwards the results managers' updates until ctx ends, then stops
// every worker.
func (m *Manager) Run(ctx context.Context) {
	defer m.cancel()
	var wg sync.WaitGroup
	for t, r := range map[ProbeType]*results.Manager{Liveness: m.Liveness, Readiness: m.Readiness, Startup: m.Startup} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-ctx.Done():
					return
				case u := <-r.Updates():
					select {
					case m.updates <- Update{Update: u, Type: t}:
					case <-ctx.Done():
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

// AddPod starts a worker for every probe of the pod's containers and of its
// restartable init containers (sidecars) that has none yet. It is called on
// every sync of the pod, and cheap when nothing is new.
func (m *Manager) AddPod(pod *v1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range probedContainers(pod) {
		for _, t := range [...]ProbeType{Startup, Readiness, Liveness} {
			if t.spec(&c) == nil {
				continue
			}
			key := probeKey{pod.UID, c.Name, t}
			if _, ok := m.workers[key]; ok {
				continue
			}
			w := newWorker(m, t, pod, c)
			m.workers[key] = w
			go w.run()
		}
	}
}

// StopLivenessAndStartup stops the liveness and startup workers of a pod that
// is terminating: it must not be restarted while it stops. Readiness goes on,
// so the pod turns unready when its containers say so.
func (m *Manager) StopLivenessAndStartup(pod *v1.Pod) {
	m.stopWhere(func(k probeKey) bool {
		return k.podUID == pod.UID && (k.probeType == Liveness || k.probeType == Startup)
	})
}

// RemovePod stops every worker of the pod; their results go with them.
func (m *Manager) RemovePod(pod *v1.Pod) {
	m.stopWhere(func(k probeKey) bool { return k.podUID == pod.UID })
}

// CleanupPods stops the workers of pods not in desired.
func (m *Manager) CleanupPods(desired map[types.UID]bool) {
	m.stopWhere(func(k probeKey) bool { return !desired[k.podUID] })
}

func (m *Manager) stopWhere(match func(probeKey) bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for k, w := range m.workers {
		if match(k) {
			w.stop()
		}
	}
}

// removeWorker forgets a worker that ended; a newer one under the same key
// (the pod was added again) stays.
func (m *Manager) removeWorker(w *worker) {
	m.mu.Lock()
	defer m.mu.Unlock()
	key := probeKey{w.pod.UID, w.container.Name, w.probeType}
	if m.workers[key] == w {
		delete(m.workers, key)
	}
}

func (m *Manager) worker(uid types.UID, name string, t ProbeType) (*worker, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	w, ok := m.workers[probeKey{uid, name, t}]
	return w, ok
}

// WorkerCount is how many probe workers run (each is one goroutine).
func (m *Manager) WorkerCount() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.workers)
}

// probedContainers are the containers whose probes run: the regular ones
// and the restartable init containers; a regular init container's probes
// are not run, as on the kubelet (the API rejects them anyway).
func probedContainers(pod *v1.Pod) []v1.Container {
	out := append([]v1.Container(nil), pod.Spec.Containers...)
	for _, c := range pod.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
			out = append(out, c)
		}
	}
	return out
}
