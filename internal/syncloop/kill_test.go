package syncloop

import (
	"testing"
	"time"

	"github.com/runlet/runlet/internal/polltest"
	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKillPodKeepsThePodFailed: KillPod stops a pod that stays in its
// source with the grace given, its final status is the status function's,
// shown only once its containers stopped, and it is never started again.
func TestKillPodKeepsThePodFailed(t *testing.T) {
	e := newLoopEnv(t, envOptions{relist: 100 * time.Millisecond, apiOnly: true, manual: true})
	ctx, f, api, loop := e.ctx, e.f, e.api, e.loop
	if loop.ActivePods() != nil || loop.PodCleanedUp("x") {
		t.Error("a loop not yet running reports pods")
	}
	e.start()

	grace := int64(30)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "evictee", Name: "evictee", Namespace: "ns"},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, TerminationGracePeriodSeconds: &grace,
			Containers: []v1.Container{{Name: "c", Image: "img:1"}}}}
	api <- []*v1.Pod{pod}
	last := func() v1.PodStatus {
		if p := e.pod(pod.UID); p != nil {
			return p.Status
		}
		return v1.PodStatus{}
	}
	polltest.Eventually(t, 10*time.Second, "Running", func() bool { return last().Phase == v1.PodRunning })
	if a := loop.ActivePods(); len(a) != 1 || a[0].UID != pod.UID {
		t.Fatalf("active pods %v", a)
	}

	three := int64(3)
	err := loop.KillPod(ctx, pod, KillPodOptions{GracePeriodOverride: &three, StatusFunc: func(st *v1.PodStatus) {
		st.Phase, st.Reason, st.Message = v1.PodFailed, "Evicted", "The node was low on resource: ephemeral-storage. "
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range f.Containers() {
		if c.State == runtime.ContainerRunning {
			t.Errorf("container %s still runs after KillPod returned", c.Name)
		}
	}
	if stops := f.Stops(); len(stops) == 0 || stops[0].Grace != 3*time.Second {
		t.Errorf("stops %+v; want the 3 s override", stops)
	}
	polltest.Eventually(t, 10*time.Second, "Failed/Evicted", func() bool { return last().Reason == "Evicted" })
	if st := last(); st.Phase != v1.PodFailed || st.ContainerStatuses[0].State.Terminated == nil {
		t.Errorf("final status %s with %+v", st.Phase, st.ContainerStatuses[0].State)
	}
	for _, st := range e.statuses(pod.UID) {
		if st.Phase == v1.PodFailed && st.ContainerStatuses[0].State.Running != nil {
			t.Errorf("Failed was reported while the container ran: %+v", st)
		}
	}
	polltest.Eventually(t, 10*time.Second, "cleaned up", func() bool { return loop.PodCleanedUp(pod.UID) })
	if len(loop.ActivePods()) != 0 {
		t.Error("the killed pod is still active")
	}

	// The pod stays in its source: an update, a resync, do not start it.
	creates := f.Calls("CreateContainer")
	updated := pod.DeepCopy()
	updated.Labels = map[string]string{"touched": "yes"}
	api <- []*v1.Pod{updated}
	time.Sleep(1500 * time.Millisecond) // a sync tick and a relist
	if n := f.Calls("CreateContainer"); n != creates {
		t.Errorf("the killed pod was started again (%d creates, was %d)", n, creates)
	}
	if last().Reason != "Evicted" {
		t.Errorf("status changed to %+v", last())
	}
	// KillPod of a finished pod returns at once; of an unknown pod, an error.
	if err := loop.KillPod(ctx, pod, KillPodOptions{}); err != nil {
		t.Errorf("KillPod of a finished pod: %v", err)
	}
	if err := loop.KillPod(ctx, &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "nobody"}}, KillPodOptions{}); err == nil {
		t.Error("KillPod of an unknown pod succeeded")
	}
}

// TestTerminateIsNotARemoval: a worker told to terminate stops the pod with
// the shorter grace and reports it, and a later update does not sync it.
func TestTerminateIsNotARemoval(t *testing.T) {
	s := &fakeSyncer{}
	w, _ := newWorkers(t, s)
	p := wpod("1")
	w.UpdatePod(p, SyncPodCreate, nil)
	expectCalls(t, s, "Sync@1")
	if w.terminate(&v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "other"}}, nil) != nil {
		t.Error("terminate of an unknown pod gave a channel")
	}
	five := int64(5)
	done := w.terminate(p, &five)
	calls := expectCalls(t, s, "Terminating@1", "Terminated@1")
	if calls[0].grace == nil || *calls[0].grace != 5 {
		t.Errorf("terminating grace %v; want 5", calls[0].grace)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("terminate's channel never closed")
	}
	w.UpdatePod(wpod("2"), SyncPodUpdate, nil)
	select {
	case c := <-s.calls:
		t.Errorf("unexpected %v after the pod was terminated", c)
	case <-time.After(100 * time.Millisecond):
	}
	w.mu.Lock()
	removed := w.work[p.UID].removed
	w.mu.Unlock()
	if removed {
		t.Error("a terminated pod counts as removed from its source")
	}
}
