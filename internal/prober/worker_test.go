package prober

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/podtest"
	"github.com/runlet/runlet/internal/prober/results"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runtimefake"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeStatus is the status manager as workers read it.
type fakeStatus struct {
	mu sync.Mutex
	st map[types.UID]v1.PodStatus
}

func (f *fakeStatus) PodStatus(uid types.UID) (v1.PodStatus, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	st, ok := f.st[uid]
	return *st.DeepCopy(), ok
}

func (f *fakeStatus) set(st v1.PodStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.st["uid"] = st
}

// harness is a manager on a fake clock whose exec probes answer with the
// exit code in code (counting the calls).
type harness struct {
	m      *Manager
	status *fakeStatus
	clock  *clocktesting.FakeClock
	rt     *runtimefake.Fake
	rec    *record.FakeRecorder
	ids    []string // container IDs in the fake backend

	mu    sync.Mutex
	code  int
	execs int
}

var t0 = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{status: &fakeStatus{st: map[types.UID]v1.PodStatus{}}, clock: clocktesting.NewFakeClock(t0),
		rt: runtimefake.New(), rec: record.NewFakeRecorder(100)}
	ctx := context.Background()
	sb, _ := h.rt.CreateSandbox(ctx, runtime.SandboxConfig{PodUID: "uid", Name: "p", Namespace: "ns"})
	for range 3 {
		id, err := h.rt.CreateContainer(ctx, sb.ID, runtime.ContainerConfig{Name: "c", Image: "img"})
		if err != nil {
			t.Fatal(err)
		}
		h.ids = append(h.ids, id)
	}
	h.rt.HandleExec(func(context.Context, string, []string, runtime.StreamIO) (int, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.execs++
		return h.code, nil
	})
	h.m = NewManager(Config{Exec: h.rt, Status: h.status, Recorder: h.rec, Clock: h.clock})
	t.Cleanup(h.m.cancel)
	return h
}

func (h *harness) answer(code int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.code = code
}

func (h *harness) execCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.execs
}

func probePod(c v1.Container) *v1.Pod {
	return podtest.New("p", podtest.Namespace("ns"), podtest.UID("uid"), podtest.Containers(c),
		podtest.RestartPolicy(v1.RestartPolicyAlways))
}

func execSpec(threshold int32) *v1.Probe {
	return &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"check"}}},
		PeriodSeconds: 1, TimeoutSeconds: 1, FailureThreshold: threshold, SuccessThreshold: 1}
}

// running reports container id running since startedAt, started or not.
func (h *harness) running(id string, startedAt time.Time, started bool) {
	h.status.set(v1.PodStatus{Phase: v1.PodRunning, PodIP: "10.88.0.9", ContainerStatuses: []v1.ContainerStatus{{
		Name: "c", ContainerID: "podman://" + id, Started: &started,
		State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(startedAt)}},
	}}})
}

func (h *harness) exited(id string, code int32, phase v1.PodPhase) {
	h.status.set(v1.PodStatus{Phase: phase, ContainerStatuses: []v1.ContainerStatus{{
		Name: "c", ContainerID: "podman://" + id,
		State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: code}},
	}}})
}

func expectResult(t *testing.T, r *results.Manager, id string, want results.Result) {
	t.Helper()
	got, ok := r.Get(id)
	if !ok || got != want {
		t.Fatalf("result of %s: %v (found %v), want %v", id, got, ok, want)
	}
}

func TestWorkerWaitsForContainerAndInitialDelay(t *testing.T) {
	h := newHarness(t)
	c := v1.Container{Name: "c", ReadinessProbe: execSpec(1)}
	c.ReadinessProbe.InitialDelaySeconds = 10
	w := newWorker(h.m, Readiness, probePod(c), c)

	if !w.doProbe() || h.execCount() != 0 {
		t.Fatal("probed a pod without status")
	}
	h.running(h.ids[0], h.clock.Now(), true)
	w.doProbe()
	expectResult(t, h.m.Readiness, h.ids[0], results.Failure) // readiness starts unready
	if h.execCount() != 0 {
		t.Fatal("probed during the initial delay")
	}
	h.clock.Step(10 * time.Second)
	w.doProbe()
	if h.execCount() != 1 {
		t.Fatalf("%d probes after the initial delay, want 1", h.execCount())
	}
	expectResult(t, h.m.Readiness, h.ids[0], results.Success)
}

func TestWorkerFailureThresholdAndHold(t *testing.T) {
	h := newHarness(t)
	c := v1.Container{Name: "c", LivenessProbe: execSpec(3)}
	w := newWorker(h.m, Liveness, probePod(c), c)
	h.running(h.ids[0], h.clock.Now(), true)
	h.answer(1)
	for i := 1; i <= 2; i++ {
		w.doProbe()
		expectResult(t, h.m.Liveness, h.ids[0], results.Success) // liveness starts alive; below threshold
	}
	w.doProbe()
	expectResult(t, h.m.Liveness, h.ids[0], results.Failure)
	n := h.execCount()
	w.doProbe()
	if h.execCount() != n {
		t.Fatal("probed a container that failed its liveness probe; it waits for the next one")
	}
	if len(h.rec.Events) == 0 {
		t.Fatal("no Unhealthy event")
	}
	if e := <-h.rec.Events; e != "Warning Unhealthy Liveness probe failed: " {
		t.Fatalf("event %q", e)
	}

	// The restarted container starts over, alive until proven otherwise.
	h.running(h.ids[1], h.clock.Now(), true)
	h.answer(0)
	w.doProbe()
	if _, ok := h.m.Liveness.Get(h.ids[0]); ok {
		t.Fatal("the old container's result was kept")
	}
	expectResult(t, h.m.Liveness, h.ids[1], results.Success)
	if h.execCount() != n+1 {
		t.Fatal("the new container was not probed")
	}
}

func TestWorkerSuccessThreshold(t *testing.T) {
	h := newHarness(t)
	c := v1.Container{Name: "c", ReadinessProbe: execSpec(1)}
	c.ReadinessProbe.SuccessThreshold = 3
	w := newWorker(h.m, Readiness, probePod(c), c)
	h.running(h.ids[0], h.clock.Now(), true)
	for range 2 {
		w.doProbe()
		expectResult(t, h.m.Readiness, h.ids[0], results.Failure)
	}
	w.doProbe()
	expectResult(t, h.m.Readiness, h.ids[0], results.Success)
	// One failure (threshold 1) makes it unready again; a success alone does not undo it.
	h.answer(1)
	w.doProbe()
	expectResult(t, h.m.Readiness, h.ids[0], results.Failure)
	h.answer(0)
	w.doProbe()
	expectResult(t, h.m.Readiness, h.ids[0], results.Failure)
}

func TestWorkerStartupGatesTheOthers(t *testing.T) {
	h := newHarness(t)
	c := v1.Container{Name: "c", StartupProbe: execSpec(5), LivenessProbe: execSpec(1)}
	pod := probePod(c)
	live, startup := newWorker(h.m, Liveness, pod, c), newWorker(h.m, Startup, pod, c)
	h.running(h.ids[0], h.clock.Now(), false)
	h.answer(1)
	live.doProbe()
	if h.execCount() != 0 {
		t.Fatal("liveness probed a container that has not started")
	}
	startup.doProbe()
	expectResult(t, h.m.Startup, h.ids[0], results.Unknown) // one failure of five
	h.answer(0)
	startup.doProbe()
	expectResult(t, h.m.Startup, h.ids[0], results.Success)
	n := h.execCount()
	// Once started (the status says so), startup stops and liveness runs.
	h.running(h.ids[0], h.clock.Now(), true)
	startup.doProbe()
	live.doProbe()
	if h.execCount() != n+1 {
		t.Fatalf("%d probes after the start, want one (liveness)", h.execCount()-n)
	}
}

func TestWorkerStartupFailure(t *testing.T) {
	h := newHarness(t)
	c := v1.Container{Name: "c", StartupProbe: execSpec(2)}
	w := newWorker(h.m, Startup, probePod(c), c)
	h.running(h.ids[0], h.clock.Now(), false)
	h.answer(1)
	w.doProbe()
	w.doProbe()
	expectResult(t, h.m.Startup, h.ids[0], results.Failure)
	n := h.execCount()
	w.doProbe()
	if h.execCount() != n {
		t.Fatal("a failed startup probe kept probing the same container")
	}
}

func TestWorkerEndsWithItsContainer(t *testing.T) {
	h := newHarness(t)
	c := v1.Container{Name: "c", ReadinessProbe: execSpec(1)}
	pod := probePod(c)
	w := newWorker(h.m, Readiness, pod, c)
	h.running(h.ids[0], h.clock.Now(), true)
	w.doProbe()

	h.exited(h.ids[0], 1, v1.PodRunning)
	if !w.doProbe() {
		t.Fatal("worker ended although restartPolicy Always restarts the container")
	}
	expectResult(t, h.m.Readiness, h.ids[0], results.Failure)

	pod.Spec.RestartPolicy = v1.RestartPolicyOnFailure
	h.exited(h.ids[0], 0, v1.PodRunning)
	if w.doProbe() {
		t.Fatal("worker went on for a container that exited 0 under OnFailure")
	}
	pod.Spec.RestartPolicy = v1.RestartPolicyAlways
	h.exited(h.ids[0], 0, v1.PodSucceeded)
	if w.doProbe() {
		t.Fatal("worker went on for a finished pod")
	}
}

func TestWorkerKeepsAdoptedContainersState(t *testing.T) {
	h := newHarness(t)
	c := v1.Container{Name: "c", ReadinessProbe: execSpec(1), StartupProbe: execSpec(1)}
	pod := probePod(c)
	ready, startup := newWorker(h.m, Readiness, pod, c), newWorker(h.m, Startup, pod, c)
	// Ran long before this runlet started; not started yet, so not probed.
	h.running(h.ids[0], t0.Add(-time.Hour), false)
	ready.doProbe()
	if r, ok := h.m.Readiness.Get(h.ids[0]); ok {
		t.Fatalf("an adopted container got readiness %v before its first probe", r)
	}
	// One that had started keeps started.
	h.running(h.ids[0], t0.Add(-time.Hour), true)
	startup.doProbe()
	expectResult(t, h.m.Startup, h.ids[0], results.Success)
	if h.execCount() != 0 {
		t.Fatal("probed to learn what the adopted container already said")
	}
}

// TestWorkerProbesOnTheGrid: a worker probes at the next point of the shared
// 100 ms grid, then every period on it, so probes of many pods share their
// wake-ups.
func TestWorkerProbesOnTheGrid(t *testing.T) {
	h := newHarness(t)
	h.m.start = t0.Add(-time.Hour) // not a fresh runlet: no start-up spread
	h.clock.SetTime(t0.Add(30 * time.Millisecond))
	h.running(h.ids[0], t0, true)
	c := v1.Container{Name: "c", ReadinessProbe: execSpec(1)}
	h.m.AddPod(probePod(c))
	probes := func(want int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !h.clock.HasWaiters() || h.execCount() != want {
			if time.Now().After(deadline) {
				t.Fatalf("%d probes, want %d", h.execCount(), want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	probes(0)
	h.clock.Step(70 * time.Millisecond) // t0+100ms: the next grid point
	probes(1)
	h.clock.Step(999 * time.Millisecond)
	probes(1)
	h.clock.Step(time.Millisecond) // one period later, on the grid again
	probes(2)
}
