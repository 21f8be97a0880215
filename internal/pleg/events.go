package pleg

import (
	"context"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/sirupsen/logrus"
	"k8s.io/apimachinery/pkg/util/wait"
)

// watchBackendEvents turns the backend's event stream into refresh requests.
// The stream replays and drops events, so it is never read for state; when it
// breaks (e.g. the podman service restarts) it is re-opened with backoff.
func (p *PLEG) watchBackendEvents(ctx context.Context) {
	backoff := wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Cap: 10 * time.Second, Steps: 1 << 30}
	for ctx.Err() == nil {
		ch, err := p.rt.Events(ctx)
		if err != nil {
			d := backoff.Step()
			p.log.WithError(err).Debugf("backend event stream unavailable; retrying in %s", d)
			sleep(ctx, d)
			continue
		}
		backoff = wait.Backoff{Duration: 100 * time.Millisecond, Factor: 2, Cap: 10 * time.Second, Steps: 1 << 30}
		if !p.setEvented(true) {
			// Back after a break: what changed before the stream came back
			// is only in a listing.
			p.Trigger()
		}
		for e := range ch {
			p.log.WithFields(logrus.Fields{"pod": e.PodUID, "container": e.ContainerID, "action": e.Action, "at": e.Time}).Trace("backend event")
			p.handleBackendEvent(e)
		}
		// A broken stream may have lost events: relist to be sure, and
		// every relist period until the stream is back.
		p.setEvented(false)
		p.Trigger()
		sleep(ctx, 100*time.Millisecond)
	}
}

// setEvented records whether the event stream is up; the relist period
// follows (see eventedRelistPeriod). It returns the state before.
func (p *PLEG) setEvented(up bool) bool {
	was := p.evented.Swap(up)
	if was != up {
		p.log.WithField("eventStream", up).Info("backend event stream state changed; relist period follows")
	}
	return was
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// handleBackendEvent refreshes the pod an event names. An event naming only
// a container is dropped unless the container is known: it may well belong
// to somebody else on the host, and a container of ours that nobody listed
// yet is covered by its own pod's refresh or the next relist.
func (p *PLEG) handleBackendEvent(e runtime.Event) {
	uid := e.PodUID
	if uid == "" && e.ContainerID != "" {
		if uid = p.podOf(e.ContainerID); uid == "" {
			return
		}
	}
	if e.Exit != nil && e.ContainerID != "" {
		for _, ev := range p.recordExit(uid, e.ContainerID, *e.Exit) {
			p.emit(ev)
		}
	}
	if !e.Time.IsZero() && p.cache.newerThan(uid, e.Time) {
		// A view taken after the event shows it already (typically runlet's
		// own start of the container, refreshed right after its sync).
		return
	}
	if !p.unseenDeath(e) && p.deferRefresh(uid) {
		return
	}
	p.RefreshPod(uid)
}

// unseenDeath reports a container's death that no exit report has told of:
// only a listing shows it, so its refresh is never deferred.
func (p *PLEG) unseenDeath(e runtime.Event) bool {
	if e.Action != runtime.ActionDied || e.ContainerID == "" {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	_, known := p.exits[e.ContainerID]
	return !known
}
