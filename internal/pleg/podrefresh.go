package pleg

import (
	"context"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/sirupsen/logrus"
)

// podRefreshers is how many single-pod refreshes run at once: enough for a
// burst of starts, few enough not to crowd the backend.
const podRefreshers = 4

// RefreshPod asks for the pod's view to be re-read soon, on its own. This is
// the evented PLEG's shortcut: a backend event or a sync that changed the pod
// updates its view in one cheap call instead of waiting for the next full
// relist, which stays the source of truth. Requests for a pod coalesce.
// Without a backend that lists single pods it asks for a full relist.
func (p *PLEG) RefreshPod(uid string) {
	if !p.podList || uid == "" {
		p.Trigger()
		return
	}
	p.pods.Add(uid)
}

// Hold defers the refreshes that backend events ask for while the pod's
// worker changes the pod: each create, start and stop it makes comes back as
// an event, and the refresh after its step covers them all in one listing.
// Exits still reach the cache at once (recordExit), and explicit requests
// (RefreshPod) are never deferred.
func (p *PLEG) Hold(uid string) {
	p.heldMu.Lock()
	defer p.heldMu.Unlock()
	if _, ok := p.held[uid]; !ok {
		p.held[uid] = false
	}
}

// Release ends a Hold. The pod is refreshed once if its step changed the
// backend or an event came in meanwhile.
func (p *PLEG) Release(uid string, changed bool) {
	p.heldMu.Lock()
	deferred := p.held[uid]
	delete(p.held, uid)
	p.heldMu.Unlock()
	if changed || deferred {
		p.RefreshPod(uid)
	}
}

// deferRefresh records an event's refresh of a held pod for its Release and
// reports whether it did.
func (p *PLEG) deferRefresh(uid string) bool {
	p.heldMu.Lock()
	defer p.heldMu.Unlock()
	if _, ok := p.held[uid]; !ok {
		return false
	}
	p.held[uid] = true
	return true
}

func (p *PLEG) startPodRefreshers(ctx context.Context) {
	if !p.podList {
		return
	}
	go func() {
		<-ctx.Done()
		p.pods.ShutDown()
	}()
	for range podRefreshers {
		go func() {
			for p.refreshNext(ctx) {
			}
		}()
	}
}

func (p *PLEG) refreshNext(ctx context.Context) bool {
	uid, quit := p.pods.Get()
	if quit {
		return false
	}
	defer p.pods.Done(uid)
	p.relistPod(ctx, uid)
	return true
}

// relistPod lists one pod and applies its view like a relist would.
func (p *PLEG) relistPod(ctx context.Context, uid string) {
	ts := time.Now()
	sbs, ctrs, err := p.rt.List(ctx, runtime.ListFilter{PodUID: uid})
	if err != nil {
		p.log.WithError(err).WithField("pod", uid).Debug("pod refresh failed; the next relist covers it")
		return
	}
	ps := &runtime.PodStatus{UID: uid, Sandboxes: sbs, Containers: ctrs, Timestamp: ts}
	ps.SortNewestFirst()
	events := p.apply(ts, map[string]*runtime.PodStatus{uid: ps}, false)
	for _, e := range events {
		p.emit(e)
	}
	p.log.WithFields(logrus.Fields{"pod": uid, "events": len(events), "took": time.Since(ts)}).Trace("pod refreshed")
}
