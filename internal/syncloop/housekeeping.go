package syncloop

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// housekeeping removes backend pods that belong to no pod, and forgets
// finished workers, as HandlePodCleanups does. Until every source has been
// seen, and the PLEG has listed the backend once, it does nothing but keep
// mirror pods: a slow start must never delete live workloads, nor the
// volumes of a pod deleted while runlet was down whose containers still
// run (the kubelet's cleanups read the runtime's list too).
func (l *Loop) housekeeping(ctx context.Context) {
	seen := l.cfg.SourcesSeen()
	l.syncMirrors(seen)
	if !seen || !l.cfg.Cache.Listed() {
		return
	}
	desired := map[types.UID]bool{}
	for _, p := range l.pods.list() {
		desired[p.UID] = true
	}
	if l.cfg.Prober != nil {
		l.cfg.Prober.CleanupPods(desired)
	}
	for _, uid := range l.workers.forget(desired) {
		l.statusFuncs.Delete(uid)
		l.cfg.Status.Delete(uid)
		l.cfg.Runtime.Forget(string(uid))
	}
	for _, uid := range l.orphans(desired) {
		l.removeOrphan(ctx, uid)
	}
	l.forgetAllocations(desired)
	l.retryPendingResizes()
	l.cleanupPodDirs(ctx)
	l.cfg.Runtime.GC()
}

// orphanRetry is how long a finished removal (until the next relist shows
// it) keeps an orphan from being removed again.
const orphanRetry = 10 * time.Second

// maxOrphanRemovals bounds the removals in flight: a podman that hangs must
// not collect a goroutine per orphan and housekeeping round.
const maxOrphanRemovals = 4

// removal is an orphan's removal: in flight until done is set.
type removal struct {
	done time.Time
}

// removeOrphan removes a pod's backend objects off the loop's goroutine, so
// a mass deletion does not stall config updates and lifecycle events.
func (l *Loop) removeOrphan(ctx context.Context, uid string) {
	l.removingMu.Lock()
	r, ok := l.removing[uid]
	inFlight := 0
	for _, o := range l.removing {
		if o.done.IsZero() {
			inFlight++
		}
	}
	if (ok && (r.done.IsZero() || time.Since(r.done) < orphanRetry)) || inFlight >= maxOrphanRemovals {
		l.removingMu.Unlock()
		return
	}
	l.removing[uid] = &removal{}
	l.removingMu.Unlock()
	ps := l.cfg.Cache.Get(uid)
	go func() {
		l.log.WithField("podUID", uid).Info("removing backend objects of a pod no source holds")
		if err := l.cfg.Runtime.RemovePod(ctx, ps); err != nil {
			l.log.WithError(err).WithField("podUID", uid).Warn("removing orphaned pod failed")
		}
		l.removingMu.Lock()
		l.removing[uid].done = time.Now()
		l.removingMu.Unlock()
		l.cfg.PLEG.RefreshPod(uid)
	}()
}

// pruneRemoving forgets finished removals the cache no longer shows.
func (l *Loop) pruneRemoving(inCache map[string]bool) {
	l.removingMu.Lock()
	defer l.removingMu.Unlock()
	for uid, r := range l.removing {
		if !inCache[uid] && !r.done.IsZero() {
			delete(l.removing, uid)
		}
	}
}

// orphans lists pod UIDs with backend objects but neither a desired pod nor
// a worker still busy with them.
func (l *Loop) orphans(desired map[types.UID]bool) []string {
	var out []string
	uids := l.cfg.Cache.UIDs()
	inCache := make(map[string]bool, len(uids))
	for _, uid := range uids {
		inCache[uid] = true
	}
	l.pruneRemoving(inCache)
	for _, uid := range uids {
		if desired[types.UID(uid)] || l.workers.known(types.UID(uid)) {
			continue
		}
		// A pod refused at admission is the API's but must not run: the
		// kubelet kills what the runtime still runs of it, as an orphan's.
		if l.cfg.InAPI != nil && l.cfg.InAPI(types.UID(uid)) && !l.isRejected(types.UID(uid)) {
			continue
		}
		out = append(out, uid)
	}
	return out
}

// forgetAllocations drops the resource records of pods no source holds,
// no worker runs and the backend no longer has: a pod found again after a
// restart of runlet keeps what the node granted it.
func (l *Loop) forgetAllocations(desired map[types.UID]bool) {
	if l.cfg.Allocation == nil {
		return
	}
	keep := func(uid types.UID) bool {
		if desired[uid] || l.workers.known(uid) {
			return true
		}
		ps := l.cfg.Cache.Get(string(uid))
		return len(ps.Sandboxes) > 0 || len(ps.Containers) > 0
	}
	if err := l.cfg.Allocation.RemoveOrphans(keep); err != nil {
		l.log.WithError(err).Warn("forgetting the resources of pods that went failed")
	}
}
