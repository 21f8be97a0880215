package nodeshutdown

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
)

// The kubelet's words for a pod refused, and a pod stopped, by a node
// shutdown; NodeShutdown is also the reason of the Node's events.
const (
	NotAdmittedReason  = "NodeShutdown"
	notAdmittedMessage = "Pod was rejected as the node is shutting down."
	shutdownReason     = "Terminated"
	shutdownMessage    = "Pod was terminated in response to imminent node shutdown."
	eventReason        = "NodeShutdown"
)

// readyWait bounds the wait for the node's pod sources.
const readyWait = 10 * time.Second

// ErrOff answers a shutdown request when no grace period is configured.
var ErrOff = errors.New("graceful node shutdown is off: shutdownGracePeriod (or shutdownGracePeriodByPodPriority) is not set")

// KillFunc stops a pod within grace seconds and, once its containers have
// stopped, amends its status with status: the sync loop's KillPod.
type KillFunc func(ctx context.Context, pod *v1.Pod, grace int64, status func(*v1.PodStatus)) error

// Config is what the manager stops pods with.
type Config struct {
	// Periods are the priority groups, lowest first (see Periods); none:
	// graceful node shutdown is off.
	Periods []ByPodPriority
	// Ready reports that the node has taken in every pod source: after a
	// restart of runlet, ActivePods lists the pods it runs only from then
	// on. nil: always.
	Ready func() bool
	// ActivePods are the pods the node runs (the kubelet's GetActivePods).
	ActivePods func() []*v1.Pod
	KillPod    KillFunc
	// PodCleanedUp reports a stopped pod whose volumes are released: a
	// group's wait ends once all of its pods are, as the kubelet waits for
	// their volumes to unmount before the next group.
	PodCleanedUp func(*v1.Pod) bool
	Recorder     record.EventRecorder
	NodeRef      *v1.ObjectReference
	Log          logrus.FieldLogger
	// Clock times the groups; nil: the real one.
	Clock clock.Clock
}

// Manager is the node's shutdown manager.
type Manager struct {
	cfg     Config
	changed chan struct{}

	mu           sync.Mutex
	shuttingDown bool
	// done is closed when the shutdown under way has stopped every pod;
	// nil before a shutdown, and again after a cancelled one.
	done chan struct{}
}

// New returns the manager; with no periods it is off: it admits every pod,
// keeps the node Ready and refuses shutdown requests with ErrOff.
func New(cfg Config) *Manager {
	if cfg.Clock == nil {
		cfg.Clock = clock.RealClock{}
	}
	return &Manager{cfg: cfg, changed: make(chan struct{}, 1)}
}

// Enabled reports a configured grace period.
func (m *Manager) Enabled() bool { return len(m.cfg.Periods) > 0 }

// Admit refuses every new pod while the node shuts down (an admit handler,
// the kubelet's last).
func (m *Manager) Admit(*v1.Pod) (bool, string, string) {
	if m.ShutdownStatus() != nil {
		return false, NotAdmittedReason, notAdmittedMessage
	}
	return true, "", ""
}

// ShutdownStatus fails while the node shuts down: the node's Ready
// condition turns False with it (KubeletNotReady, "node is shutting down").
func (m *Manager) ShutdownStatus() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.shuttingDown {
		return errors.New("node is shutting down")
	}
	return nil
}

// Changed receives a value when ShutdownStatus changes, for the node's
// status to follow at once.
func (m *Manager) Changed() <-chan struct{} { return m.changed }

// Shutdown starts the node's shutdown, unless one is under way, and returns
// a channel closed once it has stopped every pod (or its grace periods
// ran out). ctx bounds the shutdown itself, not the wait: it is runlet's
// life, so that a caller who stops waiting does not stop the shutdown.
func (m *Manager) Shutdown(ctx context.Context) (<-chan struct{}, error) {
	if !m.Enabled() {
		return nil, ErrOff
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done == nil {
		m.done = make(chan struct{})
		go m.run(ctx, m.done)
	}
	return m.done, nil
}

// run is one shutdown: once the node has taken in its pods (a request
// may come right after a restart), it refuses new ones, goes NotReady
// and stops those it runs.
func (m *Manager) run(ctx context.Context, done chan struct{}) {
	defer close(done)
	m.waitReady(ctx)
	m.mu.Lock()
	if m.done != done { // called off meanwhile
		m.mu.Unlock()
		return
	}
	m.shuttingDown = true
	m.notify()
	m.event("Shutdown manager detected shutdown event")
	pods := m.cfg.ActivePods()
	m.mu.Unlock()
	m.cfg.Log.WithField("pods", len(pods)).Info("node shutdown: stopping the node's pods")
	m.killPods(ctx, pods)
	m.cfg.Log.Info("node shutdown: the node's pods have stopped")
}

// waitReady waits, at most readyWait, for the node to take in its pod
// sources; one that cannot be read (no apiserver) does not hold the
// shutdown back for longer.
func (m *Manager) waitReady(ctx context.Context) {
	if m.cfg.Ready == nil {
		return
	}
	deadline := m.cfg.Clock.After(readyWait)
	for !m.cfg.Ready() {
		select {
		case <-ctx.Done():
			return
		case <-deadline:
			m.cfg.Log.Warn("node shutdown: not every pod source was read; stopping the pods known")
			return
		case <-time.After(poll):
		}
	}
}

// Cancel ends the shutdown state after the host called its shutdown off
// (logind's PrepareForShutdown(false)): the node turns Ready and admits
// pods again. Pods already stopped stay stopped, as on the kubelet.
func (m *Manager) Cancel() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done == nil {
		return
	}
	m.shuttingDown, m.done = false, nil
	m.notify()
	m.event("Shutdown manager detected shutdown cancellation")
}

// notify is called with m.mu held.
func (m *Manager) notify() {
	select {
	case m.changed <- struct{}{}:
	default:
	}
}

func (m *Manager) event(msg string) {
	if m.cfg.Recorder != nil && m.cfg.NodeRef != nil {
		m.cfg.Recorder.Event(m.cfg.NodeRef, v1.EventTypeNormal, eventReason, msg)
	}
}
