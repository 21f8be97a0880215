package syncloop

import (
	"testing"
	"time"

	"github.com/runlet/runlet/internal/podconfig"
	"github.com/runlet/runlet/internal/polltest"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestActiveDeadlineUpdatedOnRunningPod: a deadline set on a running pod
// fails it with DeadlineExceeded once passed, and its containers are
// stopped; the reason stays after they exited.
func TestActiveDeadlineUpdatedOnRunningPod(t *testing.T) {
	e := newLoopEnv(t, envOptions{})
	pod := loopPod("dl")
	e.api <- []*v1.Pod{pod}
	e.file <- nil
	polltest.Eventually(t, 10*time.Second, "Running", func() bool { p := e.pod("dl"); return p != nil && p.Status.Phase == v1.PodRunning })

	updated := pod.DeepCopy()
	deadline := int64(1)
	updated.Spec.ActiveDeadlineSeconds = &deadline
	e.api <- []*v1.Pod{updated}
	polltest.Eventually(t, 10*time.Second, "DeadlineExceeded and containers stopped", func() bool {
		p := e.pod("dl")
		return p.Status.Phase == v1.PodFailed && p.Status.Reason == "DeadlineExceeded" && e.running("dl") == 0
	})
	time.Sleep(300 * time.Millisecond) // the final status after the kill
	p := e.pod("dl")
	if p.Status.Phase != v1.PodFailed || p.Status.Reason != "DeadlineExceeded" ||
		p.Status.Message != "Pod was active on the node longer than the specified deadline" {
		t.Errorf("final status %s %q %q", p.Status.Phase, p.Status.Reason, p.Status.Message)
	}
	if cs := p.Status.ContainerStatuses[0]; cs.State.Terminated == nil {
		t.Errorf("container %+v; want terminated", cs.State)
	}
	if n := e.f.Calls("CreateContainer"); n != 1 {
		t.Errorf("%d containers created; the failed pod must not restart its container", n)
	}
}

// TestDeletedPodIsFinalized: a deleted API pod goes to the deleter once its
// containers stopped and its backend objects are gone, with a terminal
// status; a static pod is never deleted that way.
func TestDeletedPodIsFinalized(t *testing.T) {
	e := newLoopEnv(t, envOptions{})
	apiPod, static := loopPod("api"), loopPod("static")
	static.Annotations = map[string]string{podconfig.ConfigSourceAnnotation: podconfig.FileSource}
	e.api <- []*v1.Pod{apiPod}
	e.file <- []*v1.Pod{static}
	for _, uid := range []types.UID{"api", "static"} {
		polltest.Eventually(t, 10*time.Second, string(uid)+" Running", func() bool { p := e.pod(uid); return p != nil && p.Status.Phase == v1.PodRunning })
	}
	now := metav1.Now()
	// Sources send a changed pod as a new object (podconfig.Config.Channel).
	apiPod, static = apiPod.DeepCopy(), static.DeepCopy()
	for _, p := range []*v1.Pod{apiPod, static} {
		p.DeletionTimestamp = &now
	}
	e.api <- []*v1.Pod{apiPod}
	e.file <- []*v1.Pod{static}
	polltest.Eventually(t, 10*time.Second, "api pod finalized", func() bool { return e.wasDeleted("api") })
	e.mu.Lock()
	got := e.deleted["api"]
	e.mu.Unlock()
	if got.Status.Phase != v1.PodSucceeded && got.Status.Phase != v1.PodFailed {
		t.Errorf("finalized with phase %s; want a terminal one", got.Status.Phase)
	}
	for _, c := range e.f.Containers() {
		if c.PodUID == "api" {
			t.Errorf("container %s of the finalized pod still in the backend", c.ID)
		}
	}
	polltest.Eventually(t, 10*time.Second, "static pod's containers removed", func() bool { return e.running("static") == 0 })
	time.Sleep(300 * time.Millisecond)
	if e.wasDeleted("static") {
		t.Error("a static pod went to the API deleter")
	}
}
