package syncloop

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/kuberuntime"
	"github.com/runlet/runlet/internal/pleg"
	"github.com/runlet/runlet/internal/podconfig"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runtimefake"
	"github.com/runlet/runlet/internal/status"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
)

// loopEnv runs the whole loop over the fake backend, as TestLoopEndToEnd.
type loopEnv struct {
	f       *runtimefake.Fake
	api     chan<- []*v1.Pod
	file    chan<- []*v1.Pod
	rec     *record.FakeRecorder
	mu      sync.Mutex
	latest  map[types.UID]*v1.Pod
	deleted map[types.UID]*v1.Pod
}

func (e *loopEnv) DeletePod(_ context.Context, pod *v1.Pod) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.deleted[pod.UID] = pod
	return nil
}

func (e *loopEnv) WriteStatus(context.Context, *v1.Pod) error { return nil }

func newLoopEnv(t *testing.T) *loopEnv {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	log := logrus.New()
	log.SetOutput(io.Discard)
	e := &loopEnv{f: runtimefake.New(), rec: record.NewFakeRecorder(100), latest: map[types.UID]*v1.Pod{}, deleted: map[types.UID]*v1.Pod{}}
	cache := pleg.NewCache()
	pl := pleg.New(e.f, cache, 200*time.Millisecond, log)
	mux := podconfig.New(ctx, nil)
	e.api, e.file = mux.Channel(podconfig.APISource), mux.Channel(podconfig.FileSource)
	sm := status.NewManager()
	sm.SetStatusWriter(e, log)
	sm.SetNotifier(func(p *v1.Pod) {
		e.mu.Lock()
		e.latest[p.UID] = p
		e.mu.Unlock()
	})
	loop := New(Config{
		Updates: mux.Updates(), SourcesSeen: mux.SeenAllSources, PLEG: pl, Cache: cache, Recorder: e.rec,
		Runtime: kuberuntime.NewManager(kuberuntime.Config{Runtime: e.f, RuntimeName: "podman", Owner: "node-1", Log: log}),
		Status:  sm, HostIPs: []string{"192.168.1.2"}, Log: log,
	})
	go pl.Run(ctx)
	go sm.Run(ctx)
	go loop.Run(ctx)
	return e
}

func (e *loopEnv) pod(uid types.UID) *v1.Pod {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.latest[uid]
}

func (e *loopEnv) wasDeleted(uid types.UID) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.deleted[uid]
	return ok
}

func (e *loopEnv) running(uid types.UID) int {
	n := 0
	for _, c := range e.f.Containers() {
		if c.PodUID == string(uid) && c.State == runtime.ContainerRunning {
			n++
		}
	}
	return n
}

func loopPod(uid string) *v1.Pod {
	grace := int64(1)
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Name: uid, Namespace: "ns"},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, TerminationGracePeriodSeconds: &grace,
			Containers: []v1.Container{{Name: "c", Image: "img:1"}}}}
}

// TestActiveDeadlineUpdatedOnRunningPod: a deadline set on a running pod
// fails it with DeadlineExceeded once passed, and its containers are
// stopped; the reason stays after they exited.
func TestActiveDeadlineUpdatedOnRunningPod(t *testing.T) {
	e := newLoopEnv(t)
	pod := loopPod("dl")
	e.api <- []*v1.Pod{pod}
	e.file <- nil
	eventually(t, "Running", func() bool { p := e.pod("dl"); return p != nil && p.Status.Phase == v1.PodRunning })

	updated := pod.DeepCopy()
	deadline := int64(1)
	updated.Spec.ActiveDeadlineSeconds = &deadline
	e.api <- []*v1.Pod{updated}
	eventually(t, "DeadlineExceeded and containers stopped", func() bool {
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
	e := newLoopEnv(t)
	apiPod, static := loopPod("api"), loopPod("static")
	static.Annotations = map[string]string{podconfig.ConfigSourceAnnotation: podconfig.FileSource}
	e.api <- []*v1.Pod{apiPod}
	e.file <- []*v1.Pod{static}
	for _, uid := range []types.UID{"api", "static"} {
		eventually(t, string(uid)+" Running", func() bool { p := e.pod(uid); return p != nil && p.Status.Phase == v1.PodRunning })
	}
	now := metav1.Now()
	for _, p := range []*v1.Pod{apiPod, static} {
		p.DeletionTimestamp = &now
	}
	e.api <- []*v1.Pod{apiPod}
	e.file <- []*v1.Pod{static}
	eventually(t, "api pod finalized", func() bool { return e.wasDeleted("api") })
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
	eventually(t, "static pod's containers removed", func() bool { return e.running("static") == 0 })
	time.Sleep(300 * time.Millisecond)
	if e.wasDeleted("static") {
		t.Error("a static pod went to the API deleter")
	}
}
