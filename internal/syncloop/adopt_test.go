package syncloop

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/runlet/runlet/internal/polltest"
)

// TestWorkerFinishedPodNeverSyncs: a pod the API already holds as ended
// (taken on after a restart of runlet) is only stopped and cleaned up; its
// containers are never started again, whatever its restart policy.
func TestWorkerFinishedPodNeverSyncs(t *testing.T) {
	s := &fakeSyncer{}
	w, _ := newWorkers(t, s)
	p := wpod("1")
	p.Spec.RestartPolicy = v1.RestartPolicyAlways
	p.Status.Phase = v1.PodFailed
	w.UpdatePod(p, SyncPodCreate, nil)
	expectCalls(t, s, "Terminating@1", "Terminated@1")
	polltest.Eventually(t, 10*time.Second, "finished", func() bool { return w.isFinished("uid") })
}

// TestWorkerPodReAddedSameUID: a static pod whose manifest goes and comes
// back keeps its UID; it must run again, also when it comes back while its
// earlier self is still stopping.
func TestWorkerPodReAddedSameUID(t *testing.T) {
	release := make(chan struct{})
	s := &fakeSyncer{}
	w, _ := newWorkers(t, s)
	restarted := make(chan types.UID, 2)
	w.onRestart = func(uid types.UID) { restarted <- uid }

	w.UpdatePod(wpod("1"), SyncPodCreate, nil)
	expectCalls(t, s, "Sync@1")
	w.UpdatePod(wpod("2"), SyncPodKill, nil)
	expectCalls(t, s, "Terminating@2", "Terminated@2")
	polltest.Eventually(t, 10*time.Second, "finished", func() bool { return w.isFinished("uid") })
	w.UpdatePod(wpod("3"), SyncPodCreate, nil)
	expectCalls(t, s, "Sync@3")
	if uid := <-restarted; uid != "uid" {
		t.Fatalf("onRestart(%s)", uid)
	}

	s.terminating = func() error { <-release; return nil }
	w.UpdatePod(wpod("4"), SyncPodKill, nil)
	expectCalls(t, s, "Terminating@4")
	w.UpdatePod(wpod("5"), SyncPodCreate, nil) // back while still stopping
	close(release)
	expectCalls(t, s, "Terminated@5", "Sync@5")
}
