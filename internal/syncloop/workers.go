package syncloop

import (
	"context"

	"github.com/runlet/runlet/internal/telemetry"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// UpdateType is why a pod worker is asked to run.
type UpdateType int

// Update types, as the kubelet's SyncPodType.
const (
	SyncPodCreate UpdateType = iota
	SyncPodUpdate
	SyncPodSync
	SyncPodKill
)

// workState is where a pod is in its lifecycle.
type workState int

const (
	stateSync workState = iota
	stateTerminating
	stateTerminated
)

// syncer is what the pod workers drive; the sync loop implements it.
type syncer interface {
	SyncPod(ctx context.Context, pod *v1.Pod, since time.Time) (terminal bool, requeue time.Duration, err error)
	SyncTerminatingPod(ctx context.Context, pod *v1.Pod, since time.Time, grace *int64) error
	SyncTerminatedPod(ctx context.Context, pod *v1.Pod, since time.Time) error
}

// podWork is one pod's worker state.
type podWork struct {
	pod     *v1.Pod
	state   workState
	grace   *int64
	pending bool
	updates chan struct{}
	// lastChange is when the last step that touched the backend ended: the
	// next step acts only on a view taken after it, so it never misses its
	// own doing. Steps that changed nothing leave it alone, so a pod is not
	// held waiting for a listing only because it was synced a moment ago.
	lastChange time.Time
	finished   bool
	// removed: the pod left its source (REMOVE). restart: it came back under
	// the same UID, as a static pod does when its manifest returns; it runs
	// again once its earlier self has stopped, as on the kubelet.
	removed bool
	restart bool
	done    chan struct{}
	// step is the step in flight, if any: a pod that starts terminating, or
	// whose grace period shrinks, cancels it and is taken up again at once
	// (a sync stuck in an image pull or a postStart hook gives way).
	step *runningStep
	// killed are closed once the pod's containers have stopped, for those
	// who asked for its termination (KillPod).
	killed []chan struct{}
}

// podWorkers runs one goroutine per pod UID; the newest update replaces an
// unprocessed older one.
type podWorkers struct {
	mu      sync.Mutex
	work    map[types.UID]*podWork
	syncer  syncer
	queue   *workQueue
	ctx     context.Context
	resync  time.Duration
	backoff time.Duration
	// changed reports (and forgets) whether the pod's last step touched the
	// backend; nil counts every step as a change.
	changed func(types.UID) bool
	// beforeStep runs as a step begins, afterStep once it is recorded, with
	// whether it changed the backend: the loop then asks for a view that is
	// sure to begin after lastChange.
	beforeStep func(types.UID)
	afterStep  func(uid types.UID, changed bool)
	// onRestart runs when a stopped pod starts over under the same UID: what
	// was kept of its earlier run (its final status) must go.
	onRestart func(types.UID)
}

func newPodWorkers(ctx context.Context, s syncer, q *workQueue, resync, backoff time.Duration) *podWorkers {
	return &podWorkers{work: map[types.UID]*podWork{}, syncer: s, queue: q, ctx: ctx, resync: resync, backoff: backoff}
}

// UpdatePod hands the worker the newest pod and why.
func (w *podWorkers) UpdatePod(pod *v1.Pod, typ UpdateType, graceOverride *int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	pw, ok := w.work[pod.UID]
	if !ok {
		pw = &podWork{updates: make(chan struct{}, 1), done: make(chan struct{})}
		if podFinished(pod) {
			// Taken on after a restart of runlet: it ended before, so it only
			// needs whatever still runs stopped, never a container started.
			pw.state = stateTerminating
		}
		w.work[pod.UID] = pw
		go w.run(pod.UID, pw)
	}
	switch {
	case typ == SyncPodCreate && pw.removed:
		pw.restart = true
	case typ == SyncPodKill:
		pw.removed, pw.restart = true, false
	}
	if pw.finished && pw.restart {
		w.startOver(pod.UID, pw)
	} else if pw.finished && typ != SyncPodKill && pod.DeletionTimestamp == nil {
		// A finished pod only needs its final clean-up once it is deleted.
		return
	}
	pw.pod = pod
	if pw.state == stateSync && (typ == SyncPodKill || pod.DeletionTimestamp != nil) {
		pw.state = stateTerminating
	}
	if graceOverride != nil && (pw.grace == nil || *graceOverride < *pw.grace) {
		pw.grace = graceOverride
	}
	w.kick(pw)
	pw.step.cancelIfOutdated(pw)
}

func (w *podWorkers) run(uid types.UID, pw *podWork) {
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-pw.done:
			return
		case <-pw.updates:
		}
		w.mu.Lock()
		if !pw.pending {
			w.mu.Unlock()
			continue
		}
		pod, state, grace, since := pw.pod, pw.state, pw.grace, pw.lastChange
		pw.pending = false
		ctx, cancel := context.WithCancel(w.ctx)
		pw.step = &runningStep{state: state, grace: effectiveGrace(pod, grace), cancel: cancel}
		w.mu.Unlock()

		if w.beforeStep != nil {
			w.beforeStep(uid)
		}
		next, requeue, err := w.step(ctx, pod, state, grace, since)
		cancel()
		w.mu.Lock()
		pw.step = nil
		w.mu.Unlock()
		changed := w.changed == nil || w.changed(uid)
		w.complete(uid, pw, next, requeue, err, changed)
		if w.afterStep != nil {
			w.afterStep(uid, changed)
		}
	}
}

func (w *podWorkers) step(ctx context.Context, pod *v1.Pod, state workState, grace *int64, since time.Time) (workState, time.Duration, error) {
	op := [...]string{"sync", "terminating", "terminated"}[state]
	start := time.Now()
	next, requeue, err := w.doStep(ctx, pod, state, grace, since)
	telemetry.PodWorkerDuration.WithLabelValues(op).Observe(time.Since(start).Seconds())
	if err != nil {
		telemetry.PodWorkerErrors.WithLabelValues(op).Inc()
	}
	return next, requeue, err
}

func (w *podWorkers) doStep(ctx context.Context, pod *v1.Pod, state workState, grace *int64, since time.Time) (workState, time.Duration, error) {
	switch state {
	case stateSync:
		terminal, requeue, err := w.syncer.SyncPod(ctx, pod, since)
		if err == nil && terminal {
			return stateTerminating, 0, nil
		}
		return stateSync, requeue, err
	case stateTerminating:
		if err := w.syncer.SyncTerminatingPod(ctx, pod, since, grace); err != nil {
			return stateTerminating, 0, err
		}
		return stateTerminated, 0, nil
	}
	return stateTerminated, 0, w.syncer.SyncTerminatedPod(ctx, pod, since)
}

// complete records the outcome and schedules the next run: immediately when
// the state advanced, at the back-off's expiry, or at the resync interval.
func (w *podWorkers) complete(uid types.UID, pw *podWork, next workState, requeue time.Duration, err error, changed bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if changed {
		pw.lastChange = time.Now()
	}
	advanced := next != pw.state && pw.state != stateTerminated
	if pw.state != stateTerminated && next > pw.state {
		pw.state = next
	}
	if pw.state == stateTerminated {
		pw.notifyKilled()
	}
	switch {
	case pw.state == stateTerminated && !advanced:
		pw.finished = err == nil
		if err != nil {
			w.queue.Enqueue(uid, w.backoff)
		} else if pw.restart {
			w.startOver(uid, pw)
			w.kick(pw)
		}
	case advanced:
		w.kick(pw)
	case requeue > 0:
		w.queue.Enqueue(uid, requeue)
	case err != nil:
		w.queue.Enqueue(uid, w.backoff)
	default:
		w.queue.Enqueue(uid, wait.Jitter(w.resync, 0.5))
	}
}

// terminate ends a pod that stays in its source (an eviction): unlike
// SyncPodKill it does not count as removed, so the pod is never started over
// under its UID. The channel returned is closed once its containers have
// stopped; nil when no worker runs the pod.
func (w *podWorkers) terminate(pod *v1.Pod, grace *int64) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	pw, ok := w.work[pod.UID]
	if !ok {
		return nil
	}
	ch := make(chan struct{})
	if pw.state == stateTerminated {
		close(ch)
		return ch
	}
	pw.killed = append(pw.killed, ch)
	if pw.state == stateSync {
		pw.state = stateTerminating
	}
	if grace != nil && (pw.grace == nil || *grace < *pw.grace) {
		pw.grace = grace
	}
	w.kick(pw)
	pw.step.cancelIfOutdated(pw)
	return ch
}

// notifyKilled tells those waiting for the pod's end. Called with w.mu held.
func (pw *podWork) notifyKilled() {
	for _, ch := range pw.killed {
		close(ch)
	}
	pw.killed = nil
}

// startOver makes a stopped pod's worker sync it afresh. Called with w.mu held.
func (w *podWorkers) startOver(uid types.UID, pw *podWork) {
	pw.state, pw.grace = stateSync, nil
	pw.finished, pw.removed, pw.restart = false, false, false
	if w.onRestart != nil {
		w.onRestart(uid)
	}
}

func (w *podWorkers) kick(pw *podWork) {
	pw.pending = true
	select {
	case pw.updates <- struct{}{}:
	default:
	}
}

// resume re-runs an unfinished worker with the pod it already holds.
func (w *podWorkers) resume(uid types.UID) {
	w.mu.Lock()
	defer w.mu.Unlock()
	pw, ok := w.work[uid]
	if !ok || pw.finished || pw.pod == nil {
		return
	}
	w.kick(pw)
}

// isFinished reports a pod whose worker finished: its final clean-up done.
func (w *podWorkers) isFinished(uid types.UID) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	pw, ok := w.work[uid]
	return ok && pw.finished
}

// isTerminated reports a pod whose containers have stopped for good: its
// worker is past terminating, its clean-up maybe still to come (the
// kubelet's IsPodKnownTerminated).
func (w *podWorkers) isTerminated(uid types.UID) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	pw, ok := w.work[uid]
	return ok && pw.state == stateTerminated
}

// syncing reports a pod whose worker still runs it: neither terminating nor
// terminated.
func (w *podWorkers) syncing(uid types.UID) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	pw, ok := w.work[uid]
	return ok && pw.state == stateSync
}

// known reports whether a worker exists for uid.
func (w *podWorkers) known(uid types.UID) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.work[uid]
	return ok
}

// forget drops finished workers of pods the sources no longer hold.
func (w *podWorkers) forget(desired map[types.UID]bool) []types.UID {
	w.mu.Lock()
	defer w.mu.Unlock()
	var gone []types.UID
	for uid, pw := range w.work {
		if !desired[uid] && pw.finished {
			close(pw.done)
			delete(w.work, uid)
			gone = append(gone, uid)
		}
	}
	return gone
}

// podFinished reports a pod the API already holds as Succeeded or Failed.
func podFinished(pod *v1.Pod) bool {
	return pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed
}
