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
)

// StatusWriter is what the status manager writes to the API itself, where
// the framework does not. Each gets the pod carrying its newest status.
type StatusWriter interface {
	// WriteStatus writes the status of a pod whose phase is already
	// terminal: the framework never rewrites a terminal pod, so containers
	// still being stopped (past a deadline, after a failed init container)
	// would otherwise show running for good.
	WriteStatus(ctx context.Context, pod *v1.Pod) error
	// DeletePod writes the final status of a pod that finished terminating,
	// then deletes its object.
	DeletePod(ctx context.Context, pod *v1.Pod) error
}

// ErrPodGone says the pod's API object is already gone or was replaced.
var ErrPodGone = errors.New("pod is gone from the API")

// apiSync does the status manager's own API writes, off the pod workers and
// the notifier. The one that matters most is the kubelet's last step for a
// deleted pod (canBeDeleted, then the delete in syncPod): once the pod
// worker reports the pod finished (containers stopped, backend objects
// removed), its terminal status is written and the object deleted with
// grace 0 and a UID precondition. It is the only delete of a pod that
// terminated: the framework's force deletes come back to runlet as graceful
// deletes (internal/vknode), so the API always gets the final status first.
type apiSync struct {
	writer StatusWriter
	log    logrus.FieldLogger

	mu sync.Mutex
	// pending pods to write, true for those to delete after.
	pending map[types.UID]bool
	active  map[types.UID]struct{}
	kick    chan struct{}
}

func newAPISync(w StatusWriter, log logrus.FieldLogger) *apiSync {
	return &apiSync{writer: w, log: log, pending: map[types.UID]bool{}, active: map[types.UID]struct{}{}, kick: make(chan struct{}, 1)}
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

// terminalChanged queues the write of a changed status of an API pod that
// was already terminal: the framework will not write it.
func (m *Manager) terminalChanged(pod *v1.Pod) {
	if !podconfig.IsStatic(pod) {
		m.api.enqueue(pod.UID, false)
	}
}

func (s *apiSync) enqueue(uid types.UID, del bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.writer == nil {
		return
	}
	s.pending[uid] = s.pending[uid] || del
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
				m.syncAPI(ctx, uid, del)
				m.api.done(uid)
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

func (s *apiSync) done(uid types.UID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.active, uid)
	if _, again := s.pending[uid]; again {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
}

// syncAPI writes one pod's newest status (and deletes it with del), retrying
// with back-off while runlet still holds its status: a failure must not
// leave the object for the grace period's end if the apiserver comes back
// sooner.
func (m *Manager) syncAPI(ctx context.Context, uid types.UID, del bool) {
	delay := apiRetryMin
	for {
		pod, ok := m.GetPod(uid)
		if !ok {
			return
		}
		log := m.api.log.WithField("pod", pod.Namespace+"/"+pod.Name)
		var err error
		switch {
		case del && !isTerminal(pod.Status.Phase):
			// The kubelet deletes only once the phase is terminal; the pod
			// worker's final status always is.
			log.Warn("deleted pod finished without a terminal phase; left for the grace period's end")
			return
		case del:
			err = m.api.writer.DeletePod(ctx, pod)
		default:
			err = m.api.writer.WriteStatus(ctx, pod)
		}
		if err == nil || errors.Is(err, ErrPodGone) {
			return
		}
		log.WithError(err).Warn("writing a pod's status to the API failed; retrying")
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
		delay = min(2*delay, apiRetryMax)
	}
}
