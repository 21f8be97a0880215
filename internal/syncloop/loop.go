// Package syncloop is the kubelet's syncLoop: one select over config
// updates, lifecycle events, the sync and housekeeping tickers and probe
// results, dispatching work to one worker per pod.
package syncloop

import (
	"context"
	"sync"
	"time"

	"github.com/runlet/runlet/internal/allocation"
	"github.com/runlet/runlet/internal/kuberuntime"
	"github.com/runlet/runlet/internal/pleg"
	"github.com/runlet/runlet/internal/podconfig"
	"github.com/runlet/runlet/internal/prober"
	"github.com/runlet/runlet/internal/status"
	"github.com/runlet/runlet/internal/telemetry"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
)

// Config wires the loop to the rest of runlet.
type Config struct {
	Updates     <-chan podconfig.PodUpdate
	SourcesSeen func() bool
	PLEG        *pleg.PLEG
	Cache       *pleg.Cache
	Runtime     *kuberuntime.Manager
	Status      *status.Manager
	Recorder    record.EventRecorder
	HostIPs     []string
	MaxPods     int
	// Admission, if set, decides on new pods (sysctls, resources, ...);
	// else only MaxPods is checked.
	Admission Admitter
	Log       logrus.FieldLogger
	// Prober runs the pods' probes (internal/prober); nil: none run.
	Prober Prober
	// ProbeResults carries changed liveness/readiness/startup results.
	ProbeResults <-chan prober.Update
	// ResyncInterval is how often a healthy pod is synced anyway.
	ResyncInterval time.Duration
	// Mirror, if set, keeps the mirror pods of static pods; housekeeping feeds it.
	Mirror MirrorPods
	// InAPI, if set, reports a pod the API still holds for this node: its
	// backend objects are never removed as an orphan's, whatever the sources
	// say (a pod deleted while runlet was down is handed over late).
	InAPI func(types.UID) bool
	// Volumes, if set, tears down pods' volumes and directories.
	Volumes PodVolumes
	// Admit, if set, may refuse a new pod with a reason and message (the
	// eviction manager's admission under node pressure).
	Admit func(*v1.Pod) (ok bool, reason, message string)
	// Allocation, if set, holds what the node granted each pod and applied
	// to its containers: in-place resizes (internal/allocation).
	Allocation *allocation.Manager
}

// Loop is the sync loop.
type Loop struct {
	cfg     Config
	pods    *podManager
	workers *podWorkers
	queue   *workQueue
	log     logrus.FieldLogger
	// changed holds pods whose last sync touched the backend.
	changed sync.Map
	// removing holds orphans whose removal was started.
	removingMu sync.Mutex
	removing   map[string]*removal
	// rejected holds pods refused at admission until they leave their source.
	rejected map[types.UID]struct{}
	// statusFuncs amend the final statuses of pods killed by KillPod.
	statusFuncs sync.Map
	// started is closed once Run has made the workers.
	started chan struct{}
	// handled holds the sources the loop has taken an update from: the
	// first one carries the source's whole snapshot (the kubelet's
	// sourcesReady, which its loop records as it handles each update).
	handled sync.Map
}

const (
	syncPeriod         = time.Second
	housekeepingPeriod = 2 * time.Second
	workerBackoff      = 10 * time.Second
)

// New returns a loop; Run starts it.
func New(cfg Config) *Loop {
	if cfg.ResyncInterval == 0 {
		cfg.ResyncInterval = time.Minute
	}
	return &Loop{cfg: cfg, pods: newPodManager(), queue: newWorkQueue(), log: cfg.Log, removing: map[string]*removal{}, rejected: map[types.UID]struct{}{}, started: make(chan struct{})}
}

// Run blocks until ctx ends.
func (l *Loop) Run(ctx context.Context) {
	l.workers = newPodWorkers(ctx, l, l.queue, l.cfg.ResyncInterval, workerBackoff)
	l.workers.changed = l.takeChanged
	l.workers.beforeStep, l.workers.afterStep = l.beforeStep, l.afterStep
	l.workers.onRestart = l.forgetRun
	close(l.started)
	syncTicker := time.NewTicker(syncPeriod)
	defer syncTicker.Stop()
	hk := time.NewTicker(housekeepingPeriod)
	defer hk.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case u := <-l.cfg.Updates:
			l.handleUpdate(u)
		case e := <-l.cfg.PLEG.Watch():
			l.handleLifecycleEvent(e)
		case <-syncTicker.C:
			l.dispatchDue()
		case u := <-l.cfg.ProbeResults:
			l.handleProbeResult(u)
		case <-hk.C:
			l.housekeeping(ctx)
		}
	}
}

func (l *Loop) handleUpdate(u podconfig.PodUpdate) {
	l.log.WithFields(logrus.Fields{"op": u.Op.String(), "source": u.Source, "pods": len(u.Pods)}).Debug("config update")
	for _, p := range u.Pods {
		switch u.Op {
		case podconfig.ADD:
			l.handleAdd(p)
		case podconfig.UPDATE, podconfig.DELETE:
			if l.isRejected(p.UID) {
				if p.DeletionTimestamp != nil {
					// It never ran: the status manager deletes it at once.
					l.cfg.Status.PodTerminated(p)
				}
				continue
			}
			old, _ := l.pods.get(p.UID)
			l.warnUnsupported(old, p)
			l.pods.set(p)
			l.handleResize(p)
			l.workers.UpdatePod(p, SyncPodUpdate, nil)
		case podconfig.REMOVE:
			if l.forgetRejected(p.UID) {
				continue
			}
			l.pods.remove(p.UID)
			telemetry.ForgetPodTrace(p.UID)
			if l.cfg.Volumes != nil {
				// As the kubelet's pod manager unregisters a removed pod's
				// objects at once: the node may no longer read them, and a
				// watch of one that outlived the pod would be refused.
				l.cfg.Volumes.ForgetObjects(p.UID)
			}
			l.workers.UpdatePod(p, SyncPodKill, removedGrace(u.Source, p))
		case podconfig.RECONCILE:
			l.handleReconcile(p)
		}
	}
	if l.cfg.Mirror != nil && len(u.Pods) > 0 && (u.Source == podconfig.FileSource || u.Source == podconfig.HTTPSource) {
		// Mirror pods follow at once, not at the next housekeeping.
		l.syncMirrors(l.cfg.SourcesSeen())
	}
	l.handled.Store(u.Source, true)
}

// SourceHandled reports that the loop has admitted the pods of the
// source's first snapshot: ActivePods lists them from then on.
func (l *Loop) SourceHandled(source string) bool {
	_, ok := l.handled.Load(source)
	return ok
}

// removedGrace is the grace period of a pod that left its source. A pod the
// API dropped that runlet never saw marked for deletion went at once: only a
// forced delete (grace 0) does that, and the framework's queue can fold the
// deletion into the removal. The kubelet sees each watch event in turn, so it
// stops such a pod as a forced delete; so does runlet. A static pod whose
// manifest went keeps its own grace period, as on the kubelet.
func removedGrace(source string, p *v1.Pod) *int64 {
	if source != podconfig.APISource || p.DeletionTimestamp != nil {
		return nil
	}
	zero := int64(0)
	return &zero
}

// handleAdd admits a pod, as HandlePodAdditions does.
func (l *Loop) handleAdd(p *v1.Pod) {
	if r := l.admit(p); !r.Admit {
		l.reject(p, r.Reason, r.Message)
		return
	}
	if !l.workers.known(p.UID) {
		l.warnUnsupported(nil, p)
	}
	l.admitAllocation(p)
	l.pods.set(p)
	l.workers.UpdatePod(p, SyncPodCreate, nil)
}

// reject fails a pod the node cannot admit, with an event.
func (l *Loop) reject(p *v1.Pod, reason, msg string) {
	l.rejected[p.UID] = struct{}{}
	if l.cfg.Recorder != nil {
		l.cfg.Recorder.Event(p, v1.EventTypeWarning, reason, msg)
	}
	st := p.Status.DeepCopy()
	st.Phase, st.Reason, st.Message = v1.PodFailed, reason, "Pod was rejected: "+msg
	l.cfg.Status.SetPodStatus(p, *st)
}

func (l *Loop) handleReconcile(p *v1.Pod) {
	l.pods.set(p)
	if p.Status.Phase == v1.PodFailed || p.Status.Phase == v1.PodSucceeded || len(p.Spec.ReadinessGates) > 0 {
		// A readiness gate's condition may have changed: Ready follows.
		l.workers.UpdatePod(p, SyncPodSync, nil)
	}
}

func (l *Loop) handleLifecycleEvent(e *pleg.Event) {
	l.dispatch(types.UID(e.PodUID), SyncPodSync)
}

func (l *Loop) dispatch(uid types.UID, typ UpdateType) {
	if p, ok := l.pods.get(uid); ok {
		l.workers.UpdatePod(p, typ, nil)
	}
}

func (l *Loop) dispatchDue() {
	for _, uid := range l.queue.GetDue() {
		if _, ok := l.pods.get(uid); !ok {
			// No source holds the pod any more, but its worker may still owe a
			// retry of a failed termination or clean-up.
			l.workers.resume(uid)
			continue
		}
		l.dispatch(uid, SyncPodSync)
	}
	for _, uid := range l.podsPastDeadline() {
		l.dispatch(uid, SyncPodSync)
	}
}

// takeChanged reports whether the pod's last sync touched the backend.
func (l *Loop) takeChanged(uid types.UID) bool {
	_, ok := l.changed.LoadAndDelete(uid)
	return ok
}

// beforeStep defers the refreshes the step's own backend events would ask for.
func (l *Loop) beforeStep(uid types.UID) {
	l.cfg.PLEG.Hold(string(uid))
}

// afterStep asks for the pod's view to be re-read once a step that changed
// the backend has been recorded, so the pod's next sync sees the effects
// without waiting for the next relist; one listing also covers the events
// the step deferred.
func (l *Loop) afterStep(uid types.UID, changed bool) {
	l.cfg.PLEG.Release(string(uid), changed)
}

// forgetRun drops what was kept of a pod's earlier run when it starts over.
func (l *Loop) forgetRun(uid types.UID) {
	l.statusFuncs.Delete(uid)
	l.cfg.Status.Delete(uid)
	l.cfg.Runtime.Forget(string(uid))
}

func (l *Loop) isRejected(uid types.UID) bool {
	_, ok := l.rejected[uid]
	return ok
}

// forgetRejected drops a rejected pod that left its source, and its status.
func (l *Loop) forgetRejected(uid types.UID) bool {
	if !l.isRejected(uid) {
		return false
	}
	delete(l.rejected, uid)
	l.cfg.Status.Delete(uid)
	return true
}
