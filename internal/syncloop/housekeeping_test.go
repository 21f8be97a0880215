package syncloop

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/polltest"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runtimefake"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestHousekeepingWaitsForSources: backend objects of a pod no source holds
// are removed, but only once every source has been seen.
func TestHousekeepingWaitsForSources(t *testing.T) {
	seen := false
	e := newLoopEnv(t, envOptions{manual: true, syncer: &fakeSyncer{calls: make(chan call, 100)}, sourcesSeen: func() bool { return seen }})
	ctx, f, l := e.ctx, e.f, e.loop
	for _, uid := range []string{"orphan", "desired"} {
		sb, err := f.CreateSandbox(ctx, runtime.SandboxConfig{PodUID: uid, Namespace: "ns", Name: uid})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.CreateContainer(ctx, sb.ID, runtime.ContainerConfig{Name: "c", Image: "img:1"}); err != nil {
			t.Fatal(err)
		}
	}
	e.pl.Relist(ctx)
	l.pods.set(&v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "desired", Name: "desired", Namespace: "ns"}})

	pods := func() map[string]bool {
		out := map[string]bool{}
		for _, sb := range f.Sandboxes() {
			out[sb.PodUID] = true
		}
		for _, c := range f.Containers() {
			out[c.PodUID] = true
		}
		return out
	}
	l.housekeeping(ctx)
	if got := pods(); !got["orphan"] || !got["desired"] {
		t.Fatalf("before every source was seen, housekeeping left %v", got)
	}
	seen = true
	l.housekeeping(ctx)
	// The removal runs off the loop's goroutine.
	deadline := time.Now().Add(10 * time.Second)
	for got := pods(); got["orphan"] && time.Now().Before(deadline); got = pods() {
		time.Sleep(10 * time.Millisecond)
	}
	if got := pods(); got["orphan"] || !got["desired"] {
		t.Errorf("housekeeping left %v; want only the desired pod", got)
	}
	l.housekeeping(ctx)
	if n := f.Calls("RemoveSandbox"); n != 1 {
		t.Errorf("RemoveSandbox called %d times; a removal in flight must not be repeated", n)
	}
}

// TestHousekeepingKeepsPodsTheAPIHolds: a pod no source holds yet, but the
// API does (deleted while runlet was down, handed over late), is not an
// orphan: its containers wait for their graceful stop.
func TestHousekeepingKeepsPodsTheAPIHolds(t *testing.T) {
	e := newLoopEnv(t, envOptions{manual: true, syncer: &fakeSyncer{calls: make(chan call, 100)}, sourcesSeen: func() bool { return true },
		config: func(c *Config) { c.InAPI = func(uid types.UID) bool { return uid == "late" } }})
	ctx, f, l := e.ctx, e.f, e.loop
	if _, err := f.CreateSandbox(ctx, runtime.SandboxConfig{PodUID: "late", Namespace: "ns", Name: "late"}); err != nil {
		t.Fatal(err)
	}
	e.pl.Relist(ctx)
	l.housekeeping(ctx)
	time.Sleep(100 * time.Millisecond) // a removal would run off the loop's goroutine
	if n := f.Calls("RemoveSandbox"); n != 0 {
		t.Errorf("RemoveSandbox called %d times for a pod the API holds", n)
	}
}

// TestHousekeepingRemovesRejectedPods: a pod the API holds but the node
// refused at admission (after a restart, say) has its leftover containers
// removed, as the kubelet kills the runtime pods no pod worker runs.
func TestHousekeepingRemovesRejectedPods(t *testing.T) {
	e := newLoopEnv(t, envOptions{manual: true, syncer: &fakeSyncer{calls: make(chan call, 100)}, sourcesSeen: func() bool { return true },
		config: func(c *Config) { c.InAPI = func(types.UID) bool { return true } }})
	ctx, f, l := e.ctx, e.f, e.loop
	for _, uid := range []string{"refused", "kept"} {
		if _, err := f.CreateSandbox(ctx, runtime.SandboxConfig{PodUID: uid, Namespace: "ns", Name: uid}); err != nil {
			t.Fatal(err)
		}
	}
	l.reject(loopPod("refused"), "NodeShutdown", "the node is shutting down")
	e.pl.Relist(ctx)
	l.housekeeping(ctx)
	polltest.Eventually(t, 10*time.Second, "the refused pod's sandbox removed", func() bool { return f.Calls("RemoveSandbox") == 1 })
	time.Sleep(100 * time.Millisecond) // a second removal would run off the loop's goroutine
	if n := f.Calls("RemoveSandbox"); n != 1 {
		t.Errorf("RemoveSandbox called %d times; want once, for the refused pod only", n)
	}
}

// hangingRemovals is a backend whose pod removals hang until released.
type hangingRemovals struct {
	*runtimefake.Fake
	release  chan struct{}
	inFlight atomic.Int32
	most     atomic.Int32
}

func (h *hangingRemovals) RemoveSandbox(ctx context.Context, id string) error {
	n := h.inFlight.Add(1)
	for m := h.most.Load(); n > m && !h.most.CompareAndSwap(m, n); m = h.most.Load() {
	}
	defer h.inFlight.Add(-1)
	<-h.release
	return h.Fake.RemoveSandbox(ctx, id)
}

// TestOrphanRemovalsBounded: while podman hangs, housekeeping rounds do not
// pile up removals: one per orphan at most, and a few in all.
func TestOrphanRemovalsBounded(t *testing.T) {
	h := &hangingRemovals{release: make(chan struct{})}
	e := newLoopEnv(t, envOptions{manual: true, syncer: &fakeSyncer{calls: make(chan call, 100)}, sourcesSeen: func() bool { return true },
		backend: func(f *runtimefake.Fake) runtime.Runtime { h.Fake = f; return h }})
	ctx, l := e.ctx, e.loop
	for i := 0; i < 10; i++ {
		uid := fmt.Sprintf("orphan-%d", i)
		if _, err := h.CreateSandbox(ctx, runtime.SandboxConfig{PodUID: uid, Namespace: "ns", Name: uid}); err != nil {
			t.Fatal(err)
		}
	}
	e.pl.Relist(ctx)
	for round := 0; round < 20; round++ {
		l.housekeeping(ctx)
	}
	time.Sleep(100 * time.Millisecond)
	if got := h.most.Load(); got > maxOrphanRemovals {
		t.Errorf("%d removals in flight at once; want at most %d", got, maxOrphanRemovals)
	}
	if got := h.Calls("RemoveSandbox"); got != 0 {
		t.Errorf("a hanging removal completed: %d", got)
	}
	close(h.release)
	deadline := time.Now().Add(10 * time.Second)
	for len(h.Sandboxes()) > 10-maxOrphanRemovals && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(h.Sandboxes()); n != 10-maxOrphanRemovals {
		t.Errorf("%d sandboxes left after the first removals finished; want %d", n, 10-maxOrphanRemovals)
	}
}
