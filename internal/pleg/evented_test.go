package pleg

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/polltest"
	"github.com/runlet/runlet/internal/runtime/runtimefake"
)

// TestRelistRarelyWhileEventsFlow: with the backend's event stream up the
// PLEG relists at the evented period; once the stream breaks (and cannot be
// re-opened) it relists every period again, and is healthy meanwhile.
func TestRelistRarelyWhileEventsFlow(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := runtimefake.New()
	p := New(f, NewCache(), 20*time.Millisecond, quietLog())
	go p.Run(ctx)
	polltest.Eventually(t, 10*time.Second, "event stream up", p.evented.Load)
	time.Sleep(100 * time.Millisecond) // the relist the stream's start asks for
	before := f.Calls("List")
	time.Sleep(300 * time.Millisecond)
	if n := f.Calls("List") - before; n != 0 {
		t.Errorf("%d relists in 300ms with the event stream up; want none before the evented period", n)
	}
	if ok, _ := p.Healthy(); !ok {
		t.Error("unhealthy while events flow")
	}

	f.Fail("Events", errors.New("service restarting"))
	f.BreakEvents()
	polltest.Eventually(t, 10*time.Second, "event stream down", func() bool { return !p.evented.Load() })
	before = f.Calls("List")
	time.Sleep(300 * time.Millisecond)
	if n := f.Calls("List") - before; n < 5 {
		t.Errorf("%d relists in 300ms without an event stream; want one every 20ms", n)
	}
}
