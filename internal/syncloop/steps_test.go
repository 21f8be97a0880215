package syncloop

import (
	"context"
	"strconv"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// blockingSyncer blocks each step until its context ends, and reports the
// steps' starts (with their grace) and ends.
type blockingSyncer struct {
	starts chan string
	ends   chan error
}

func (b *blockingSyncer) block(ctx context.Context, what string) error {
	b.starts <- what
	<-ctx.Done()
	b.ends <- ctx.Err()
	return ctx.Err()
}

func (b *blockingSyncer) SyncPod(ctx context.Context, _ *v1.Pod, _ time.Time) (bool, time.Duration, error) {
	return false, 0, b.block(ctx, "sync")
}

func (b *blockingSyncer) SyncTerminatingPod(ctx context.Context, pod *v1.Pod, _ time.Time, _ *int64) error {
	return b.block(ctx, "terminating grace="+strconv.FormatInt(effectiveGrace(pod, nil), 10))
}

func (b *blockingSyncer) SyncTerminatedPod(context.Context, *v1.Pod, time.Time) error { return nil }

func expectStart(t *testing.T, b *blockingSyncer, want string) {
	t.Helper()
	select {
	case got := <-b.starts:
		if got != want {
			t.Fatalf("step %q, want %q", got, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("no step %q", want)
	}
}

func expectCancelled(t *testing.T, b *blockingSyncer) {
	t.Helper()
	select {
	case err := <-b.ends:
		if err != context.Canceled {
			t.Fatalf("step ended with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the step was not cancelled")
	}
}

// TestWorkerCancelsOutdatedSteps: a pod that starts terminating cancels its
// sync in flight (a long postStart hook must not hold up a delete), and a
// shorter grace period cancels a termination in flight (a preStop sleep is
// cut); both are taken up again at once.
func TestWorkerCancelsOutdatedSteps(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := &blockingSyncer{starts: make(chan string, 10), ends: make(chan error, 10)}
	w := newPodWorkers(ctx, b, newWorkQueue(), time.Hour, time.Hour)

	pod := wpod("1")
	w.UpdatePod(pod, SyncPodCreate, nil)
	expectStart(t, b, "sync")

	grace := int64(50)
	deleted := pod.DeepCopy()
	now := metav1.Now()
	deleted.DeletionTimestamp, deleted.DeletionGracePeriodSeconds = &now, &grace
	w.UpdatePod(deleted, SyncPodUpdate, nil)
	expectCancelled(t, b)
	expectStart(t, b, "terminating grace=50")

	// The same grace again changes nothing.
	w.UpdatePod(deleted.DeepCopy(), SyncPodUpdate, nil)
	select {
	case err := <-b.ends:
		t.Fatalf("termination cancelled by an unchanged grace period: %v", err)
	case <-time.After(100 * time.Millisecond):
	}

	shorter := deleted.DeepCopy()
	five := int64(5)
	shorter.DeletionGracePeriodSeconds = &five
	w.UpdatePod(shorter, SyncPodUpdate, nil)
	expectCancelled(t, b)
	expectStart(t, b, "terminating grace=5")
}
