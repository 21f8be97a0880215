package pleg

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// watchBackendEvents turns the backend's event stream into relist requests.
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
		for range ch {
			p.Trigger()
		}
		// A broken stream may have lost events: relist to be sure.
		p.Trigger()
		sleep(ctx, 100*time.Millisecond)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
