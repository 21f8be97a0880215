package syncloop

import (
	"context"
	goruntime "runtime"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/runlet/runlet/internal/polltest"
)

// TestAdmitOS: a pod for another OS is refused even with no node to check
// it against (static pods before the node is registered).
func TestAdmitOS(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	other := "windows"
	if goruntime.GOOS == other {
		other = "linux"
	}
	for _, tc := range []struct {
		name       string
		labels     map[string]string
		os         v1.OSName
		wantReason string
	}{
		{name: "nothing set"},
		{name: "matching field and label", labels: map[string]string{v1.LabelOSStable: goruntime.GOOS}, os: v1.OSName(goruntime.GOOS)},
		{name: "other OS field", os: v1.OSName(other), wantReason: "PodOSNotSupported"},
		{name: "other OS label", labels: map[string]string{v1.LabelOSStable: other}, wantReason: "PodOSSelectorNodeLabelDoesNotMatch"},
	} {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: tc.labels}}
		if tc.os != "" {
			p.Spec.OS = &v1.PodOS{Name: tc.os}
		}
		l := New(Config{})
		l.workers = newPodWorkers(ctx, &fakeSyncer{calls: make(chan call, 1)}, l.queue, time.Hour, time.Hour)
		r := l.admit(p)
		if r.Admit != (tc.wantReason == "") || r.Reason != tc.wantReason || (!r.Admit && r.Message == "") {
			t.Errorf("%s: admit = %+v; want reason %q", tc.name, r, tc.wantReason)
		}
	}
}

// TestDeletedRejectedPodIsFinalized: a pod refused at admission never ran,
// so once deleted it goes to the API deleter at once, Failed, as the
// kubelet's status manager deletes a pod that cannot have containers.
func TestDeletedRejectedPodIsFinalized(t *testing.T) {
	e := newLoopEnv(t, envOptions{})
	pod := loopPod("rejected")
	other := v1.OSName("windows")
	if goruntime.GOOS == string(other) {
		other = "linux"
	}
	pod.Spec.OS = &v1.PodOS{Name: other}
	e.api <- []*v1.Pod{pod}
	e.file <- nil
	polltest.Eventually(t, 10*time.Second, "rejected", func() bool { p := e.pod("rejected"); return p != nil && p.Status.Phase == v1.PodFailed })
	if e.wasDeleted("rejected") {
		t.Fatal("a rejected pod went to the API deleter before it was deleted")
	}
	deleted := pod.DeepCopy()
	now := metav1.Now()
	deleted.DeletionTimestamp = &now
	e.api <- []*v1.Pod{deleted}
	polltest.Eventually(t, 10*time.Second, "the deleted rejected pod finalized", func() bool { return e.wasDeleted("rejected") })
	e.mu.Lock()
	got := e.deleted["rejected"]
	e.mu.Unlock()
	if got.Status.Phase != v1.PodFailed || got.Status.Reason != "PodOSNotSupported" {
		t.Errorf("finalized with %s %q; want Failed PodOSNotSupported", got.Status.Phase, got.Status.Reason)
	}
}

// TestStoppedPodHoldsNothing: a pod whose containers have stopped for good
// no longer counts against the pods that come next, while its clean-up
// (SyncTerminatedPod, here held up) is still to finish: the API already
// shows it terminal, and the scheduler has given its place away. Until
// then it counts.
func TestStoppedPodHoldsNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	syncer := &fakeSyncer{calls: make(chan call)}
	l := New(Config{MaxPods: 1})
	l.workers = newPodWorkers(ctx, syncer, l.queue, time.Hour, time.Hour)
	close(l.started)
	old, next := loopPod("old"), loopPod("next")
	l.pods.set(old)
	l.workers.UpdatePod(old, SyncPodCreate, nil)
	if c := <-syncer.calls; c.kind != "Sync" {
		t.Fatalf("first call %s; want Sync", c)
	}
	if r := l.admit(next); r.Admit || r.Reason != "OutOfpods" {
		t.Fatalf("admit beside a running pod = %+v; want OutOfpods", r)
	}
	l.workers.UpdatePod(old, SyncPodKill, nil)
	if c := <-syncer.calls; c.kind != "Terminating" {
		t.Fatalf("call %s; want Terminating", c)
	}
	polltest.Eventually(t, 10*time.Second, "the old pod's containers stopped", func() bool { return l.workers.isTerminated(old.UID) })
	if r := l.admit(next); !r.Admit {
		t.Errorf("admit once the old pod's containers stopped = %+v; want admitted", r)
	}
	if active := l.ActivePods(); len(active) != 0 {
		t.Errorf("ActivePods = %d pods; want none running or stopping", len(active))
	}
	if l.workers.isFinished(old.UID) {
		t.Error("the old pod's clean-up finished while the test held it up")
	}
	if c := <-syncer.calls; c.kind != "Terminated" { // lets the clean-up finish
		t.Errorf("call %s; want Terminated", c)
	}
}
