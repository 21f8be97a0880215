package streaming

import (
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
)

// TestRelayResizeStopsOnZeroSize: the framework turns a closed resize stream
// into endless zero sizes; the relay must stop instead of spinning.
func TestRelayResizeStopsOnZeroSize(t *testing.T) {
	in := make(chan api.TermSize)
	out := make(chan runtime.TermSize, 1)
	go relayResize(in, out, make(chan struct{}))
	in <- api.TermSize{Width: 80, Height: 24}
	if got := <-out; got != (runtime.TermSize{Width: 80, Height: 24}) {
		t.Errorf("relayed %+v", got)
	}
	in <- api.TermSize{}
	select {
	case _, ok := <-out:
		if ok {
			t.Error("a zero size was relayed")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("relay did not stop on a zero size")
	}
}

func TestRelayResizeStopsWhenDone(t *testing.T) {
	out := make(chan runtime.TermSize, 1)
	done := make(chan struct{})
	go relayResize(make(chan api.TermSize), out, done)
	close(done)
	select {
	case <-out:
	case <-time.After(5 * time.Second):
		t.Fatal("relay did not stop when the session ended")
	}
}
