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

// Manager caches the newest status of every pod and is the one writer of
// pods' statuses to the API, as the kubelet's status manager: API pods',
// static pods' (to their mirror pods), terminal pods' and the final status
// before a pod's delete. Pod workers only hand it statuses; its own
// goroutines do the writes.
type Manager struct {
	mu       sync.Mutex
	statuses map[types.UID]*v1.Pod
	now      func() time.Time
	// api is the queue of writes and deletes.
	api     *apiSync
	apiPods APIPod
	written func(*v1.Pod)
	log     logrus.FieldLogger
}

// Config is what a Manager writes to and compares with.
type Config struct {
	// Writer, if set, does the API writes (APIWriter); without it the
	// manager only caches statuses.
	Writer StatusWriter
	// APIPods, if set, gives the API object a pod's status goes to
	// (Target): every reconcilePeriod, statuses the API does not show are
	// written again.
	APIPods APIPod
	// Written, if set, is told every status the manager writes to a pod's
	// API object, or would write while the apiserver does not answer: the
	// node's checkpoint keeps it (internal/checkpoint).
	Written func(*v1.Pod)
	// Log receives the failures of the manager's own writes.
	Log logrus.FieldLogger
}

// NewManager returns a manager whose writes wait for Run.
func NewManager(cfg Config) *Manager {
	if cfg.Log == nil {
		cfg.Log = logrus.StandardLogger()
	}
	return &Manager{
		statuses: map[types.UID]*v1.Pod{},
		now:      time.Now,
		api:      newAPISync(cfg.Writer, cfg.Log),
		apiPods:  cfg.APIPods,
		written:  cfg.Written,
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
	m.api.enqueue(pod.UID, false)
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

// Requeue writes the pod's newest status again, if there is one: its API
// object was replaced (a mirror pod recreated).
func (m *Manager) Requeue(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.statuses[uid]; ok {
		m.api.enqueue(uid, false)
	}
}

// Delete forgets a pod.
func (m *Manager) Delete(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.statuses, uid)
	m.api.forget(uid)
}

// ReconcileNow queues at once the statuses the API does not show, rather
// than at the next reconcile period: the API is back after an outage.
func (m *Manager) ReconcileNow() {
	if m.apiPods == nil {
		return
	}
	if n := m.Reconcile(m.apiPods); n > 0 {
		m.log.WithField("pods", n).Info("statuses the API does not show are written again")
	}
}

// Run does the manager's API writes, and every reconcilePeriod queues again
// the statuses the API does not show, until ctx ends.
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
			m.ReconcileNow()
		}
	}
}

func isTerminal(p v1.PodPhase) bool { return p == v1.PodSucceeded || p == v1.PodFailed }
