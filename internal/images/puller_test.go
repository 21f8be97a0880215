package images

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runtimefake"
)

// slowPulls holds every pull until released or cancelled, and records them.
type slowPulls struct {
	*runtimefake.Fake
	release chan struct{}

	mu        sync.Mutex
	started   []runtime.PullPolicy
	creds     [][]runtime.Credential
	cancelled int
	began     chan struct{}
}

func newSlowPulls() *slowPulls {
	return &slowPulls{Fake: runtimefake.New(), release: make(chan struct{}), began: make(chan struct{}, 10)}
}

func (s *slowPulls) EnsureImage(ctx context.Context, image string, policy runtime.PullPolicy, creds []runtime.Credential) (string, error) {
	s.mu.Lock()
	s.started = append(s.started, policy)
	s.creds = append(s.creds, creds)
	s.mu.Unlock()
	s.began <- struct{}{}
	select {
	case <-s.release:
		return "sha256:" + image, nil
	case <-ctx.Done():
		s.mu.Lock()
		s.cancelled++
		s.mu.Unlock()
		return "", ctx.Err()
	}
}

func (s *slowPulls) pulls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.started)
}

func (s *slowPulls) waitBegan(t *testing.T) {
	t.Helper()
	select {
	case <-s.began:
	case <-time.After(10 * time.Second):
		t.Fatal("no pull began")
	}
}

type result struct {
	p   Pull
	err error
}

func pullAsync(p *Puller, ctx context.Context, image string, creds []runtime.Credential) <-chan result {
	ch := make(chan result, 1)
	go func() {
		r, err := p.Pull(ctx, image, creds)
		ch <- result{r, err}
	}()
	return ch
}

func wait(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("Pull did not return")
	}
	return result{}
}

// Two pods pulling one image with the same credentials share one pull;
// other credentials make another pull.
func TestPullsAreShared(t *testing.T) {
	rt := newSlowPulls()
	p := NewPuller(rt, time.Minute)
	ctx := context.Background()
	a := pullAsync(p, ctx, "reg/img:1", nil)
	rt.waitBegan(t)
	b := pullAsync(p, ctx, "reg/img:1", nil)
	waitWaiters(t, p, pullKey("reg/img:1", nil), 2)
	creds := []runtime.Credential{{Server: "reg", Username: "u", Password: "p"}}
	c := pullAsync(p, ctx, "reg/img:1", creds)
	rt.waitBegan(t)
	rt.release <- struct{}{}
	rt.release <- struct{}{}
	for _, ch := range []<-chan result{a, b, c} {
		if r := wait(t, ch); r.err != nil || r.p.ImageRef != "sha256:reg/img:1" {
			t.Errorf("pull = %+v, %v", r.p, r.err)
		}
	}
	if n := rt.pulls(); n != 2 {
		t.Errorf("%d pulls; want 2 (one per set of credentials)", n)
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for i, pol := range rt.started {
		if pol != runtime.PullAlways {
			t.Errorf("pull %d with policy %s; want Always", i, pol)
		}
	}
	if len(rt.creds[1]) != 1 || rt.creds[1][0].Username != "u" {
		t.Errorf("credentials passed: %+v", rt.creds)
	}
}

// A waiter whose pod goes away stops waiting at once; the pull goes on for
// the others, and is cancelled once nobody waits for it.
func TestPullCancelledWhenNobodyWaits(t *testing.T) {
	rt := newSlowPulls()
	p := NewPuller(rt, time.Minute)
	ctxA, cancelA := context.WithCancel(context.Background())
	ctxB, cancelB := context.WithCancel(context.Background())
	a := pullAsync(p, ctxA, "img:1", nil)
	rt.waitBegan(t)
	b := pullAsync(p, ctxB, "img:1", nil)
	waitWaiters(t, p, pullKey("img:1", nil), 2)
	cancelA()
	if r := wait(t, a); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled waiter got %v", r.err)
	}
	rt.mu.Lock()
	if rt.cancelled != 0 {
		t.Error("the pull was cancelled while a pod still waited for it")
	}
	rt.mu.Unlock()
	cancelB()
	if r := wait(t, b); !errors.Is(r.err, context.Canceled) {
		t.Fatalf("second waiter got %v", r.err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		rt.mu.Lock()
		n := rt.cancelled
		rt.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the pull was not cancelled once nobody waited")
		}
		time.Sleep(time.Millisecond)
	}
	// A new pod starts a new pull rather than join the cancelled one.
	c := pullAsync(p, context.Background(), "img:1", nil)
	rt.waitBegan(t)
	rt.release <- struct{}{}
	if r := wait(t, c); r.err != nil {
		t.Fatalf("fresh pull: %v", r.err)
	}
}

func TestPullTimeout(t *testing.T) {
	rt := newSlowPulls()
	p := NewPuller(rt, 20*time.Millisecond)
	r := wait(t, pullAsync(p, context.Background(), "img:1", nil))
	if !errors.Is(r.err, context.DeadlineExceeded) || r.err.Error() != "the pull did not finish within 20ms: context deadline exceeded" {
		t.Fatalf("err = %v; want the timeout named", r.err)
	}
}

func waitWaiters(t *testing.T, p *Puller, key string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		p.mu.Lock()
		pl := p.pulls[key]
		got := 0
		if pl != nil {
			got = pl.waiters
		}
		p.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d waiters; want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}
