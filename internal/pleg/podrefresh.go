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
	if _, ok := p.rt.(runtime.PodLister); !ok || uid == "" {
		p.Trigger()
		return
	}
	p.pods.Add(uid)
}

func (p *PLEG) startPodRefreshers(ctx context.Context) {
	if _, ok := p.rt.(runtime.PodLister); !ok {
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
	l, ok := p.rt.(runtime.PodLister)
	if !ok {
		return
	}
	ts := time.Now()
	sbs, ctrs, err := l.ListPod(ctx, uid)
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
