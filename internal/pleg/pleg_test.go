package pleg

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/logtest"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runtimefake"
	"github.com/sirupsen/logrus"
)

// timedFake notes when the backend was last listed in full.
type timedFake struct {
	*runtimefake.Fake
	mu     sync.Mutex
	listed time.Time
}

func (f *timedFake) List(ctx context.Context, flt runtime.ListFilter) ([]runtime.Sandbox, []runtime.Container, error) {
	if flt.PodUID == "" {
		f.mu.Lock()
		f.listed = time.Now()
		f.mu.Unlock()
	}
	return f.Fake.List(ctx, flt)
}

func quietLog() logrus.FieldLogger {
	log := logtest.Discard()
	return log
}

func setup(t *testing.T) (*timedFake, *PLEG, *Cache) {
	f := &timedFake{Fake: runtimefake.New()}
	c := NewCache()
	return f, New(f, c, time.Hour, quietLog()), c
}

func drain(p *PLEG) []string {
	var out []string
	for {
		select {
		case e := <-p.Watch():
			out = append(out, fmt.Sprintf("%s:%s", e.PodUID, e.Type))
		default:
			return out
		}
	}
}

func TestRelistEvents(t *testing.T) {
	ctx := context.Background()
	f, p, c := setup(t)
	sb, _ := f.CreateSandbox(ctx, runtime.SandboxConfig{PodUID: "u"})
	id, _ := f.CreateContainer(ctx, sb.ID, runtime.ContainerConfig{Name: "c", Image: "i"})
	steps := []struct {
		do   func()
		want string
	}{
		{func() {}, "[]"}, // created: no event yet
		{func() { _ = f.StartContainer(ctx, id) }, "[u:ContainerStarted]"},
		{func() {}, "[]"},
		{func() { _ = f.Exit(id, 1) }, "[u:ContainerDied]"},
		{func() { _ = f.RemoveContainer(ctx, id) }, "[u:ContainerRemoved]"},
	}
	for i, s := range steps {
		s.do()
		p.Relist(ctx)
		if got := fmt.Sprint(drain(p)); got != s.want {
			t.Errorf("step %d: events %s; want %s", i, got, s.want)
		}
	}
	if ps := c.Get("u"); len(ps.Sandboxes) != 1 || len(ps.Containers) != 0 {
		t.Errorf("cache = %+v", ps)
	}
}

func TestRelistTimestampIsListStart(t *testing.T) {
	ctx := context.Background()
	f, p, c := setup(t)
	if _, err := f.CreateSandbox(ctx, runtime.SandboxConfig{PodUID: "u"}); err != nil {
		t.Fatal(err)
	}
	p.Relist(ctx)
	f.mu.Lock()
	listed := f.listed
	f.mu.Unlock()
	// A view stamped later than the list would pass for newer than a sync
	// that finished after the list was taken.
	if ts := c.Get("u").Timestamp; ts.IsZero() || ts.After(listed) {
		t.Errorf("pod view stamped %v; want no later than the list (%v)", ts, listed)
	}
	if ts := c.Get("unknown").Timestamp; ts.IsZero() || ts.After(listed) {
		t.Errorf("empty view stamped %v; want the relist start", ts)
	}
}

func TestGetNewerThanWaitsForRelist(t *testing.T) {
	ctx := context.Background()
	_, p, c := setup(t)
	p.Relist(ctx)
	since := time.Now()
	got := make(chan *runtime.PodStatus)
	go func() { got <- c.GetNewerThan("u", since, nil) }()
	time.Sleep(50 * time.Millisecond) // no relist yet: the reader must still wait
	select {
	case ps := <-got:
		t.Fatalf("GetNewerThan returned %+v before a newer relist", ps)
	default:
	}
	p.Relist(ctx)
	select {
	case ps := <-got:
		if !ps.Timestamp.After(since) {
			t.Errorf("view from %v; want newer than %v", ps.Timestamp, since)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("GetNewerThan still blocked after a relist")
	}
	stop := make(chan struct{})
	close(stop)
	go func() { got <- c.GetNewerThan("u", time.Now().Add(time.Hour), stop) }()
	c.Wake()
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("GetNewerThan ignored a closed stop channel")
	}
}

// TestEventsFollowCacheReplace: a worker woken by an event must find the
// state that caused it in the cache, so no event may leave before the
// relist's view is in place.
func TestEventsFollowCacheReplace(t *testing.T) {
	ctx := context.Background()
	f, p, c := setup(t)
	sb, _ := f.CreateSandbox(ctx, runtime.SandboxConfig{PodUID: "u"})
	id, _ := f.CreateContainer(ctx, sb.ID, runtime.ContainerConfig{Name: "c", Image: "i"})
	_ = f.StartContainer(ctx, id)
	c.mu.Lock() // hold the cache: the relist cannot publish its view
	done := make(chan struct{})
	go func() { p.Relist(ctx); close(done) }()
	select {
	case e := <-p.Watch():
		t.Errorf("event %+v sent before the cache held the relist's view", e)
	case <-time.After(200 * time.Millisecond):
	}
	c.mu.Unlock()
	<-done
	if cur, _ := c.Get("u").Latest("c"); cur == nil || cur.State != runtime.ContainerRunning {
		t.Fatalf("cache = %+v", c.Get("u"))
	}
	if got := fmt.Sprint(drain(p)); got != "[u:ContainerStarted]" {
		t.Errorf("events %s; want [u:ContainerStarted]", got)
	}
}
