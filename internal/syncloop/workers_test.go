package syncloop

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/runlet/runlet/internal/podtest"
	"github.com/runlet/runlet/internal/polltest"
)

type call struct {
	kind  string // Sync, Terminating, Terminated
	ver   string // the pod's resourceVersion
	grace *int64
}

func (c call) String() string { return c.kind + "@" + c.ver }

// fakeSyncer records every call; syncPod decides what SyncPod returns.
type fakeSyncer struct {
	calls   chan call
	syncPod func(ctx context.Context, pod *v1.Pod) (bool, time.Duration, error)
	// terminating, when set, is what SyncTerminatingPod returns.
	terminating func() error
}

func (f *fakeSyncer) SyncPod(ctx context.Context, pod *v1.Pod, _ time.Time) (bool, time.Duration, error) {
	f.calls <- call{kind: "Sync", ver: pod.ResourceVersion}
	if f.syncPod == nil {
		return false, 0, nil
	}
	return f.syncPod(ctx, pod)
}

func (f *fakeSyncer) SyncTerminatingPod(_ context.Context, pod *v1.Pod, _ time.Time, grace *int64) error {
	f.calls <- call{kind: "Terminating", ver: pod.ResourceVersion, grace: grace}
	if f.terminating != nil {
		return f.terminating()
	}
	return nil
}

func (f *fakeSyncer) SyncTerminatedPod(_ context.Context, pod *v1.Pod, _ time.Time) error {
	f.calls <- call{kind: "Terminated", ver: pod.ResourceVersion}
	return nil
}

func newWorkers(t *testing.T, s *fakeSyncer) (*podWorkers, *workQueue) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s.calls = make(chan call, 100)
	q := newWorkQueue()
	return newPodWorkers(ctx, s, q, time.Hour, 10*time.Minute), q
}

func wpod(ver string) *v1.Pod {
	p := podtest.New("p", podtest.Namespace("ns"), podtest.UID("uid"))
	p.ResourceVersion = ver
	return p
}

func expectCalls(t *testing.T, s *fakeSyncer, want ...string) []call {
	t.Helper()
	var got []call
	for len(got) < len(want) {
		select {
		case c := <-s.calls:
			got = append(got, c)
		case <-time.After(10 * time.Second):
			t.Fatalf("calls = %v; want %v", got, want)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("calls = %v; want %v", got, want)
	}
	return got
}

func TestWorkerLatestUpdateWins(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	s := &fakeSyncer{syncPod: func(ctx context.Context, pod *v1.Pod) (bool, time.Duration, error) {
		if pod.ResourceVersion == "1" {
			close(started)
			<-release
		}
		return false, 0, nil
	}}
	w, _ := newWorkers(t, s)
	w.UpdatePod(wpod("1"), SyncPodCreate, nil)
	<-started
	for _, v := range []string{"2", "3", "4"} {
		w.UpdatePod(wpod(v), SyncPodUpdate, nil)
	}
	close(release)
	expectCalls(t, s, "Sync@1", "Sync@4")
	w.UpdatePod(wpod("5"), SyncPodSync, nil)
	expectCalls(t, s, "Sync@5") // nothing ran between 4 and 5
}

func TestWorkerLifecycleOrder(t *testing.T) {
	s := &fakeSyncer{syncPod: func(context.Context, *v1.Pod) (bool, time.Duration, error) { return true, 0, nil }}
	w, _ := newWorkers(t, s)
	w.UpdatePod(wpod("1"), SyncPodCreate, nil)
	got := expectCalls(t, s, "Sync@1", "Terminating@1", "Terminated@1")
	if got[1].grace != nil {
		t.Errorf("grace = %v; want none for a pod that finished by itself", *got[1].grace)
	}
	polltest.Eventually(t, 10*time.Second, "finished", func() bool { return w.isFinished("uid") })
	// A finished pod ignores syncs; only its deletion brings it back for clean-up.
	w.UpdatePod(wpod("2"), SyncPodSync, nil)
	del := wpod("3")
	now := metav1.Now()
	del.DeletionTimestamp = &now
	w.UpdatePod(del, SyncPodUpdate, nil)
	expectCalls(t, s, "Terminated@3")
}

func TestWorkerKillWithGrace(t *testing.T) {
	s := &fakeSyncer{}
	w, _ := newWorkers(t, s)
	w.UpdatePod(wpod("1"), SyncPodCreate, nil)
	expectCalls(t, s, "Sync@1")
	grace := int64(3)
	w.UpdatePod(wpod("2"), SyncPodKill, &grace)
	got := expectCalls(t, s, "Terminating@2", "Terminated@2")
	if got[0].grace == nil || *got[0].grace != 3 {
		t.Errorf("grace = %v; want 3", got[0].grace)
	}
	polltest.Eventually(t, 10*time.Second, "finished", func() bool { return w.isFinished("uid") })
}

func TestWorkerRequeue(t *testing.T) {
	boom := errors.New("boom")
	cases := []struct {
		name     string
		requeue  time.Duration
		err      error
		min, max time.Duration
	}{
		{"error backs off", 0, boom, 9 * time.Minute, 10 * time.Minute},
		{"requeue wins", 5 * time.Minute, boom, 4 * time.Minute, 5 * time.Minute},
		{"success resyncs", 0, nil, 59 * time.Minute, 90 * time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &fakeSyncer{syncPod: func(context.Context, *v1.Pod) (bool, time.Duration, error) {
				return false, tc.requeue, tc.err
			}}
			w, q := newWorkers(t, s)
			w.UpdatePod(wpod("1"), SyncPodCreate, nil)
			expectCalls(t, s, "Sync@1")
			var next time.Duration
			polltest.Eventually(t, 10*time.Second, "a requeue", func() bool {
				d, ok := q.Next()
				next = d
				return ok
			})
			if next < tc.min || next > tc.max {
				t.Errorf("due in %s; want between %s and %s", next, tc.min, tc.max)
			}
		})
	}
}

func TestWorkerForget(t *testing.T) {
	s := &fakeSyncer{syncPod: func(_ context.Context, p *v1.Pod) (bool, time.Duration, error) {
		return p.UID == "uid", 0, nil // "uid" finishes, "live" keeps running
	}}
	w, _ := newWorkers(t, s)
	w.UpdatePod(wpod("1"), SyncPodCreate, nil)
	live := wpod("1")
	live.UID = "live"
	w.UpdatePod(live, SyncPodCreate, nil)
	polltest.Eventually(t, 10*time.Second, "finished", func() bool { return w.isFinished("uid") })
	if gone := w.forget(map[types.UID]bool{"uid": true}); len(gone) != 0 {
		t.Errorf("forget dropped %v, a pod still desired", gone)
	}
	gone := w.forget(map[types.UID]bool{})
	if fmt.Sprint(gone) != "[uid]" || w.known("uid") || !w.known("live") {
		t.Errorf("forget = %v, known(uid)=%v known(live)=%v; want only the finished worker gone",
			gone, w.known("uid"), w.known("live"))
	}
}

// sinceSyncer records the "since" each SyncPod is given.
type sinceSyncer struct {
	fakeSyncer
	since chan time.Time
}

func (s *sinceSyncer) SyncPod(ctx context.Context, pod *v1.Pod, since time.Time) (bool, time.Duration, error) {
	s.since <- since
	return s.fakeSyncer.SyncPod(ctx, pod, since)
}

// TestOnlyChangesMoveTheViewFloor: a step that touched the backend makes
// the next one wait for a newer view; one that changed nothing does not.
func TestOnlyChangesMoveTheViewFloor(t *testing.T) {
	s := &sinceSyncer{since: make(chan time.Time, 10)}
	w, _ := newWorkers(t, &s.fakeSyncer)
	w.syncer = s
	changes := []bool{true, false, false}
	var before atomic.Int32
	after := make(chan bool, 3)
	w.changed = func(types.UID) bool { c := changes[0]; changes = changes[1:]; return c }
	w.beforeStep = func(types.UID) { before.Add(1) }
	w.afterStep = func(_ types.UID, changed bool) { after <- changed }

	var since []time.Time
	for i, ver := range []string{"1", "2", "3"} {
		w.UpdatePod(wpod(ver), SyncPodUpdate, nil)
		expectCalls(t, &s.fakeSyncer, "Sync@"+ver)
		since = append(since, <-s.since)
		if i == 0 && !since[0].IsZero() {
			t.Errorf("first sync since %v; want no floor", since[0])
		}
	}
	if !since[1].After(since[0]) {
		t.Errorf("after a change the floor stayed at %v", since[1])
	}
	if !since[2].Equal(since[1]) {
		t.Errorf("a step without changes moved the floor from %v to %v", since[1], since[2])
	}
	var saw []bool
	for range 3 {
		select {
		case c := <-after:
			saw = append(saw, c)
		case <-time.After(10 * time.Second):
			t.Fatalf("afterStep ran %d times; want 3", len(saw))
		}
	}
	if n := before.Load(); n != 3 || !saw[0] || saw[1] || saw[2] {
		t.Errorf("beforeStep ran %d times, afterStep saw changes %v; want 3 and [true false false]", n, saw)
	}
}

// A sync stuck in a long call (an image pull) is cancelled as soon as its
// pod is deleted, as the kubelet's pod workers cancel theirs, and the pod
// is terminated right after.
func TestDeletionCancelsRunningSync(t *testing.T) {
	s := &fakeSyncer{}
	cancelled := make(chan error, 1)
	s.syncPod = func(ctx context.Context, pod *v1.Pod) (bool, time.Duration, error) {
		<-ctx.Done()
		cancelled <- ctx.Err()
		return false, 0, ctx.Err()
	}
	w, _ := newWorkers(t, s)
	w.UpdatePod(wpod("1"), SyncPodCreate, nil)
	expectCalls(t, s, "Sync@1")
	deleted := wpod("2")
	now := metav1.Now()
	deleted.DeletionTimestamp = &now
	w.UpdatePod(deleted, SyncPodUpdate, nil)
	select {
	case err := <-cancelled:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("sync ended with %v; want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the running sync was not cancelled by the deletion")
	}
	expectCalls(t, s, "Terminating@2", "Terminated@2")
}
