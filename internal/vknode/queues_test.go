package vknode

import (
	"testing"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"
)

// TestQueueLimiterFirstTurnIsFree: a new item goes at once; after each
// failure it waits base × 2^n, up to the cap; a success starts it afresh.
func TestQueueLimiterFirstTurnIsFree(t *testing.T) {
	l := newQueueLimiter(5*time.Millisecond, 40*time.Millisecond, 1000, 1000)
	want := []time.Duration{0, 10, 20, 40, 40}
	for i, w := range want {
		if got := l.When("a"); got != w*time.Millisecond {
			t.Fatalf("turn %d: delay %v, want %v", i, got, w*time.Millisecond)
		}
	}
	if n := l.NumRequeues("a"); n != len(want) {
		t.Errorf("NumRequeues = %d, want %d", n, len(want))
	}
	if got := l.When("b"); got != 0 {
		t.Errorf("another item's first turn waited %v", got)
	}
	l.Forget("a")
	if got := l.When("a"); got != 0 {
		t.Errorf("first turn after Forget waited %v", got)
	}
}

// TestQueueLimiterKeepsTheOverallRate: past the bucket's burst, new items
// wait for tokens although their first turn is free.
func TestQueueLimiterKeepsTheOverallRate(t *testing.T) {
	l := newQueueLimiter(5*time.Millisecond, time.Second, 10, 2)
	for _, item := range []string{"a", "b"} {
		if got := l.When(item); got != 0 {
			t.Fatalf("%s within the burst waited %v", item, got)
		}
	}
	if got := l.When("c"); got <= 0 || got > 100*time.Millisecond {
		t.Errorf("third item at 10 qps, burst 2: delay %v, want about 100ms", got)
	}
}

func TestRaiseQueueLimitsSetsAllThreeQueues(t *testing.T) {
	var c node.PodControllerConfig
	if err := RaiseQueueLimits(&c); err != nil {
		t.Fatal(err)
	}
	for name, l := range map[string]any{
		"pods": c.SyncPodsFromKubernetesRateLimiter, "statuses": c.SyncPodStatusFromProviderRateLimiter,
		"deletions": c.DeletePodsFromKubernetesRateLimiter,
	} {
		if _, ok := l.(*queueLimiter); !ok {
			t.Errorf("%s queue limiter is %T", name, l)
		}
	}
}
