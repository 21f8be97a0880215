package status

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/runlet/runlet/internal/podconfig"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/flowcontrol"
)

// StatusWriter writes to the API. Each call gets the pod carrying its newest
// status; APIWriter is the one that talks to the apiserver.
type StatusWriter interface {
	// WriteStatus writes the pod's status to its API object (a static
	// pod's goes to its mirror pod).
	WriteStatus(ctx context.Context, pod *v1.Pod) error
	// DeletePod writes the final status of a pod that finished terminating,
	// then deletes its object.
	DeletePod(ctx context.Context, pod *v1.Pod) error
}

// ErrPodGone says the pod's API object is already gone or was replaced.
var ErrPodGone = errors.New("pod is gone from the API")

// apiSync is the status manager's queue of API writes, worked off the pod
// workers: a write of a pod's newest status for every change, and for a
// deleted pod that finished terminating, the kubelet's last step
// (canBeDeleted, then the delete in syncPod): its terminal status, then a
// delete with grace 0 and a UID precondition. That is the only delete of a
// pod that terminated: the framework's force deletes come back to runlet as
// graceful deletes (internal/vknode), so the API always gets the final
// status first.
type apiSync struct {
	writer StatusWriter
	log    logrus.FieldLogger

	mu sync.Mutex
	// pending pods to write, true for those to delete after.
	pending map[types.UID]bool
	active  map[types.UID]struct{}
	kick    chan struct{}
	// backoff spaces the retries of a pod whose write failed.
	backoff *flowcontrol.Backoff
}

func newAPISync(w StatusWriter, log logrus.FieldLogger) *apiSync {
	return &apiSync{writer: w, log: log, pending: map[types.UID]bool{}, active: map[types.UID]struct{}{},
		kick: make(chan struct{}, 1), backoff: flowcontrol.NewBackOff(apiRetryMin, apiRetryMax)}
}

// Retry bounds of an API write that failed (e.g. the apiserver is away).
const (
	apiRetryMin = time.Second
	apiRetryMax = 30 * time.Second
	// apiWorkers bounds the writes in flight, so a mass deletion does not
	// open hundreds of requests at once.
	apiWorkers = 8
)

// PodTerminated records that the pod worker finished pod: every container
// stopped and its backend objects are removed (the kubelet's podIsFinished).
// A pod of the API source with a deletion timestamp then gets its final
// status written and its object deleted. A static pod's mirror is not
// deleted this way.
func (m *Manager) PodTerminated(pod *v1.Pod) {
	if pod.DeletionTimestamp != nil && !podconfig.IsStatic(pod) {
		m.api.enqueue(pod.UID, true)
	}
}

func (s *apiSync) enqueue(uid types.UID, del bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.writer == nil {
		return
	}
	s.pending[uid] = s.pending[uid] || del
	s.signal()
}

// queued reports a pod whose write is queued or under way.
func (s *apiSync) queued(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, pending := s.pending[uid]
	_, active := s.active[uid]
	return pending || active
}

func (s *apiSync) signal() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// runAPISync does the queued writes until ctx ends.
func (m *Manager) runAPISync(ctx context.Context) {
	sem := make(chan struct{}, apiWorkers)
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.api.kick:
		}
		for uid, del := range m.api.take() {
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			go func(uid types.UID, del bool) {
				defer func() { <-sem }()
				m.api.done(uid, m.syncAPI(ctx, uid, del), del)
			}(uid, del)
		}
	}
}

// take returns the queued pods not already being written.
func (s *apiSync) take() map[types.UID]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[types.UID]bool{}
	for uid, del := range s.pending {
		if _, busy := s.active[uid]; busy {
			continue // picked up again when its write is done
		}
		delete(s.pending, uid)
		s.active[uid] = struct{}{}
		out[uid] = del
	}
	return out
}

// done ends a pod's write; a failed one is queued again after a back-off,
// so one pod's failures hold no worker and the others' writes go on.
func (s *apiSync) done(uid types.UID, retry, del bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.active, uid)
	if !retry {
		s.backoff.DeleteEntry(string(uid))
	} else {
		s.backoff.Next(string(uid), s.backoff.Clock.Now())
		time.AfterFunc(s.backoff.Get(string(uid)), func() { s.enqueue(uid, del) })
	}
	if _, again := s.pending[uid]; again {
		s.signal()
	}
}

// forget drops a pod's retry state.
func (s *apiSync) forget(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.backoff.DeleteEntry(string(uid))
}

// syncAPI writes one pod's newest status (and deletes it with del). It
// reports whether the write should be tried again: it failed while runlet
// still holds the pod's status, a static pod's mirror pod does not exist
// yet, or a delete waits for the API to list the node's pods.
func (m *Manager) syncAPI(ctx context.Context, uid types.UID, del bool) (retry bool) {
	pod, ok := m.GetPod(uid)
	if !ok || ctx.Err() != nil {
		return false
	}
	log := m.api.log.WithField("pod", pod.Namespace+"/"+pod.Name)
	var err error
	switch {
	case del && !isTerminal(pod.Status.Phase):
		// The kubelet deletes only once the phase is terminal; the pod
		// worker's final status always is.
		log.Warn("deleted pod finished without a terminal phase; left for the grace period's end")
		return false
	case del:
		err = m.api.writer.DeletePod(ctx, pod)
	default:
		if m.written != nil {
			m.written(pod)
		}
		err = m.api.writer.WriteStatus(ctx, pod)
	}
	switch {
	case err == nil:
		return false
	case errors.Is(err, ErrNotListed):
		// Offline: a status is written again once the API has listed the
		// node's pods (ReconcileNow); a delete is not, and waits for it.
		return del
	case errors.Is(err, ErrPodGone):
		// A static pod's status waits for its mirror pod to be created.
		return podconfig.IsStatic(pod)
	}
	log.WithError(err).Warn("writing a pod's status to the API failed; retrying")
	return true
}
