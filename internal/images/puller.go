package images

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

// Pull is the outcome of a pull a caller waited for.
type Pull struct {
	ImageRef string
	// Took is how long the pull itself ran (for a shared pull: from when
	// the first caller started it).
	Took time.Duration
}

// Puller runs image pulls apart from the pods that wait for them. Pods that
// ask for one image with the same credentials at the same time share one
// pull. Each pull is bounded by a timeout, and is cancelled once no pod waits
// for it any more (a caller stops waiting when its context ends: its pod was
// deleted).
type Puller struct {
	rt      runtime.Images
	timeout time.Duration

	mu    sync.Mutex
	pulls map[string]*pull
}

type pull struct {
	done    chan struct{}
	cancel  context.CancelFunc
	waiters int
	// set before done is closed
	ref  string
	took time.Duration
	err  error
}

// DefaultPullTimeout bounds a pull when no timeout is configured.
const DefaultPullTimeout = 10 * time.Minute

// NewPuller returns a puller on rt; timeout <= 0 means DefaultPullTimeout.
func NewPuller(rt runtime.Images, timeout time.Duration) *Puller {
	if timeout <= 0 {
		timeout = DefaultPullTimeout
	}
	return &Puller{rt: rt, timeout: timeout, pulls: map[string]*pull{}}
}

// Pull pulls image, trying creds in order, and waits for the result or for
// ctx to end. A pull of the same image with the same credentials already
// under way is joined rather than started again.
func (p *Puller) Pull(ctx context.Context, image string, creds []runtime.Credential) (Pull, error) {
	key := pullKey(image, creds)
	p.mu.Lock()
	pl, ok := p.pulls[key]
	if !ok {
		pctx, cancel := context.WithTimeout(context.Background(), p.timeout)
		pl = &pull{done: make(chan struct{}), cancel: cancel}
		p.pulls[key] = pl
		go p.run(pctx, key, pl, image, creds)
	}
	pl.waiters++
	p.mu.Unlock()

	select {
	case <-pl.done:
		p.leave(key, pl)
		return Pull{ImageRef: pl.ref, Took: pl.took}, pl.err
	case <-ctx.Done():
		p.leave(key, pl)
		return Pull{}, ctx.Err()
	}
}

// leave drops one waiter; the last one to leave an unfinished pull cancels
// it, and a later caller starts afresh rather than join a cancelled pull.
func (p *Puller) leave(key string, pl *pull) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pl.waiters--
	if pl.waiters > 0 {
		return
	}
	select {
	case <-pl.done:
	default:
		pl.cancel()
		if p.pulls[key] == pl {
			delete(p.pulls, key)
		}
	}
}

func (p *Puller) run(ctx context.Context, key string, pl *pull, image string, creds []runtime.Credential) {
	start := time.Now()
	ref, err := p.rt.EnsureImage(ctx, image, runtime.PullAlways, creds)
	took := time.Since(start)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		err = fmt.Errorf("the pull did not finish within %v: %w", p.timeout, err)
	}
	pl.cancel()
	p.mu.Lock()
	defer p.mu.Unlock()
	pl.ref, pl.took, pl.err = ref, took, err
	if p.pulls[key] == pl {
		delete(p.pulls, key)
	}
	close(pl.done)
}

// pullKey names a pull by image and credentials: pods whose credentials
// differ never share a pull (one must not get an image through another's
// login, nor fail for want of it).
func pullKey(image string, creds []runtime.Credential) string {
	h := sha256.New()
	for _, c := range creds {
		fmt.Fprintf(h, "%q %q %q\n", c.Server, c.Username, c.Password)
	}
	return image + "\x00" + hex.EncodeToString(h.Sum(nil))
}
