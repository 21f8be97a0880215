package status

import (
	"context"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Notifier receives a pod carrying its new status. It may be slow; the
// manager calls it from its own goroutine, never from a pod worker.
type Notifier func(*v1.Pod)

// Manager caches the newest status of every pod and pushes changes upstream.
type Manager struct {
	mu       sync.Mutex
	statuses map[types.UID]*v1.Pod
	dirty    map[types.UID]struct{}
	kick     chan struct{}
	now      func() time.Time
	// api writes what the framework does not: statuses of terminal pods,
	// the final delete of pods that finished terminating.
	api     *apiSync
	apiPods APIPod
	log     logrus.FieldLogger
}

// Config is what a Manager writes to and compares with.
type Config struct {
	// Writer, if set, does the manager's own API writes: the statuses of
	// pods already terminal there and the final delete of pods that
	// finished terminating.
	Writer StatusWriter
	// APIPods, if set, gives the API's version of a pod: every
	// reconcilePeriod, statuses the API does not show are sent again.
	APIPods APIPod
	// Log receives the failures of the manager's own writes.
	Log logrus.FieldLogger
}

// NewManager returns a manager whose changes wait for Deliver.
func NewManager(cfg Config) *Manager {
	if cfg.Log == nil {
		cfg.Log = logrus.StandardLogger()
	}
	return &Manager{
		statuses: map[types.UID]*v1.Pod{},
		dirty:    map[types.UID]struct{}{},
		kick:     make(chan struct{}, 1),
		now:      time.Now,
		api:      newAPISync(cfg.Writer, cfg.Log),
		apiPods:  cfg.APIPods,
		log:      cfg.Log,
	}
}

// SetPodStatus records st for pod and queues a notification if it changed.
func (m *Manager) SetPodStatus(pod *v1.Pod, st v1.PodStatus) {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.statuses[pod.UID]
	var oldStatus *v1.PodStatus
	if old != nil {
		oldStatus = &old.Status
	} else if pod.Status.StartTime != nil {
		oldStatus = &pod.Status
	}
	if oldStatus != nil && isTerminal(oldStatus.Phase) && !isTerminal(st.Phase) && old != nil {
		// A terminal status is final, as on the kubelet.
		return
	}
	m.carryOver(oldStatus, &st)
	if old != nil && old.Status.ObservedGeneration > st.ObservedGeneration {
		// A sync of an older spec finishing late does not take the generation back.
		st.ObservedGeneration = old.Status.ObservedGeneration
	}
	if old != nil && apiequality.Semantic.DeepEqual(old.Status, st) && podMetaEqual(old, pod) {
		return
	}
	p := pod.DeepCopy()
	p.Status = st
	m.statuses[pod.UID] = p
	m.dirty[pod.UID] = struct{}{}
	m.signalLocked()
	if old != nil && isTerminal(old.Status.Phase) {
		m.terminalChanged(pod)
	}
}

// carryOver keeps the start time and condition transition times stable.
func (m *Manager) carryOver(old, st *v1.PodStatus) {
	now := metav1.NewTime(m.now().Truncate(time.Second))
	st.StartTime = &now
	if old != nil && old.StartTime != nil {
		st.StartTime = old.StartTime.DeepCopy()
	}
	for i := range st.Conditions {
		c := &st.Conditions[i]
		c.LastTransitionTime = now
		if old == nil {
			continue
		}
		for _, oc := range old.Conditions {
			if oc.Type == c.Type && oc.Status == c.Status {
				c.LastTransitionTime = oc.LastTransitionTime
			}
		}
	}
}

func podMetaEqual(a, b *v1.Pod) bool {
	return a.Name == b.Name && a.Namespace == b.Namespace
}

// WithStatus puts the newest status recorded for pod on it (a copy the
// caller owns), for readers of pods with their statuses.
func (m *Manager) WithStatus(pod *v1.Pod) *v1.Pod {
	if st, ok := m.GetPod(pod.UID); ok {
		pod.Status = st.Status
	}
	return pod
}

// GetPod returns the last pod recorded with its status.
func (m *Manager) GetPod(uid types.UID) (*v1.Pod, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.statuses[uid]
	if !ok {
		return nil, false
	}
	return p.DeepCopy(), true
}

// Delete forgets a pod.
func (m *Manager) Delete(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.statuses, uid)
	delete(m.dirty, uid)
}

// Run does the manager's own API writes and resyncs statuses with the API,
// until ctx ends.
func (m *Manager) Run(ctx context.Context) {
	go m.runAPISync(ctx)
	if m.apiPods == nil {
		<-ctx.Done()
		return
	}
	t := time.NewTicker(reconcilePeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if n := m.Reconcile(m.apiPods); n > 0 {
				m.log.WithField("pods", n).Info("statuses the API does not show are sent again")
			}
		}
	}
}

// Deliver hands every changed status to n until ctx ends, from the caller's
// goroutine: the one consumer, which starts when it is ready (the
// framework's NotifyPods). Changes made before it starts wait for it; a pod
// that changed several times in between is delivered once, as it is now.
func (m *Manager) Deliver(ctx context.Context, n Notifier) {
	for {
		for _, p := range m.drain() {
			m.keepForeignConditions(p)
			n(p)
		}
		select {
		case <-ctx.Done():
			return
		case <-m.kick:
		}
	}
}

// keepForeignConditions puts the API's current foreign conditions (those
// others set, such as readiness gates') into a status about to be sent: the
// write replaces the whole status, and must not wipe what others set since
// runlet generated it.
func (m *Manager) keepForeignConditions(pod *v1.Pod) {
	if m.apiPods == nil {
		return
	}
	if api, ok := m.apiPods(pod); ok {
		KeepForeignConditions(&pod.Status, api.Status.Conditions)
	}
}

func (m *Manager) drain() []*v1.Pod {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*v1.Pod, 0, len(m.dirty))
	for uid := range m.dirty {
		if p, ok := m.statuses[uid]; ok {
			out = append(out, p.DeepCopy())
		}
		delete(m.dirty, uid)
	}
	return out
}

func (m *Manager) signalLocked() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

func isTerminal(p v1.PodPhase) bool { return p == v1.PodSucceeded || p == v1.PodFailed }
