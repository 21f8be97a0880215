package syncloop

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
)

// housekeeping removes backend pods that belong to no pod, and forgets
// finished workers, as HandlePodCleanups does. Until every source has been
// seen it does nothing but keep mirror pods: a slow start must never delete
// live workloads.
func (l *Loop) housekeeping(ctx context.Context) {
	seen := l.cfg.SourcesSeen()
	l.syncMirrors(seen)
	if !seen {
		return
	}
	desired := map[types.UID]bool{}
	for _, p := range l.pods.list() {
		desired[p.UID] = true
	}
	for _, uid := range l.workers.forget(desired) {
		l.cfg.Status.Delete(uid)
		l.cfg.Runtime.Forget(string(uid))
	}
	for _, uid := range l.orphans(desired) {
		ps := l.cfg.Cache.Get(uid)
		l.log.WithField("podUID", uid).Info("removing backend objects of a pod no source holds")
		if err := l.cfg.Runtime.RemovePod(ctx, ps); err != nil {
			l.log.WithError(err).WithField("podUID", uid).Warn("removing orphaned pod failed")
		}
		l.cfg.PLEG.Trigger()
	}
	l.cfg.Runtime.GC()
}

// orphans lists pod UIDs with backend objects but neither a desired pod nor
// a worker still busy with them.
func (l *Loop) orphans(desired map[types.UID]bool) []string {
	var out []string
	for _, uid := range l.cfg.Cache.UIDs() {
		if desired[types.UID(uid)] || l.workers.known(types.UID(uid)) {
			continue
		}
		out = append(out, uid)
	}
	return out
}
