package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/prober/results"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runtimefake"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
)

// fakeHooks records the handlers run, with how many stops had happened by
// then; fn decides each outcome.
type fakeHooks struct {
	mu    sync.Mutex
	f     *runtimefake.Fake
	calls []string
	fn    func(ctx context.Context, h *v1.LifecycleHandler) error
}

func (h *fakeHooks) Run(ctx context.Context, _ *v1.Pod, c *v1.Container, id, podIP string, lh *v1.LifecycleHandler) (string, error) {
	h.mu.Lock()
	h.calls = append(h.calls, fmt.Sprintf("%s %s stops=%d ip=%s", lh.Exec.Command[0], c.Name, len(h.f.Stops()), podIP))
	h.mu.Unlock()
	if h.fn != nil {
		if err := h.fn(ctx, lh); err != nil {
			return "hook failed", err
		}
	}
	return "", nil
}

func hooked(e *env) (*fakeHooks, *record.FakeRecorder) {
	h := &fakeHooks{f: e.f}
	rec := record.NewFakeRecorder(100)
	e.m.hooks, e.m.rec = h, rec
	return h, rec
}

func handler(cmd string) *v1.LifecycleHandler {
	return &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{cmd}}}
}

func events(rec *record.FakeRecorder) string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return strings.Join(out, "\n")
		}
	}
}

func TestPreStopRunsBeforeStopAndUsesTheGrace(t *testing.T) {
	e := newEnv(t)
	h, rec := hooked(e)
	h.fn = func(context.Context, *v1.LifecycleHandler) error { time.Sleep(20 * time.Millisecond); return nil }
	pod := newPod(v1.RestartPolicyAlways, "c", "plain")
	pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PreStop: handler("prestop")}
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	if err := e.m.KillPod(e.ctx, pod, e.status(pod), nil); err != nil {
		t.Fatal(err)
	}
	if len(h.calls) != 1 || !strings.HasPrefix(h.calls[0], "prestop c stops=") {
		t.Fatalf("hooks run: %v", h.calls)
	}
	for _, s := range e.f.Stops() {
		if s.ID == e.latest(pod, "c").ID && (s.Grace >= 30*time.Second || s.Grace < 29*time.Second) {
			t.Errorf("stop grace %s: want 30 s less the hook's time", s.Grace)
		}
	}
	if ev := events(rec); !strings.Contains(ev, "Normal Killing Stopping container c") {
		t.Errorf("events:\n%s", ev)
	}
}

func TestPreStopBoundedByGrace(t *testing.T) {
	e := newEnv(t)
	h, rec := hooked(e)
	h.fn = func(ctx context.Context, _ *v1.LifecycleHandler) error { <-ctx.Done(); return ctx.Err() }
	pod := newPod(v1.RestartPolicyAlways, "c")
	pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PreStop: handler("hang")}
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	one := int64(1)
	if err := e.m.KillPod(e.ctx, pod, e.status(pod), &one); err != nil {
		t.Fatal(err)
	}
	// The hook used up the grace period: the container still gets 2 s.
	if stops := e.f.Stops(); len(stops) != 1 || stops[0].Grace != minimumGracePeriod {
		t.Errorf("stops %+v, want one with the minimum grace", stops)
	}
	// Running out of time is not a failure of the hook.
	if ev := events(rec); strings.Contains(ev, "FailedPreStopHook") {
		t.Errorf("events:\n%s", ev)
	}

	// Grace 0: no hook at all.
	h.calls = nil
	e2 := newEnv(t)
	h2, _ := hooked(e2)
	if _, err := e2.sync(pod); err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	if err := e2.m.KillPod(e2.ctx, pod, e2.status(pod), &zero); err != nil || len(h2.calls) != 0 {
		t.Fatalf("grace 0 ran hooks %v (%v)", h2.calls, err)
	}
}

func TestPreStopFailure(t *testing.T) {
	e := newEnv(t)
	h, rec := hooked(e)
	h.fn = func(context.Context, *v1.LifecycleHandler) error { return errors.New("exit 3") }
	pod := newPod(v1.RestartPolicyAlways, "c")
	pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PreStop: handler("fail")}
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	if err := e.m.KillPod(e.ctx, pod, e.status(pod), nil); err != nil {
		t.Fatal(err)
	}
	if ev := events(rec); !strings.Contains(ev, "Warning FailedPreStopHook PreStopHook failed") {
		t.Errorf("events:\n%s", ev)
	}
	if len(e.f.Stops()) != 1 {
		t.Errorf("a failed preStop hook kept the container from stopping: %+v", e.f.Stops())
	}
}

func TestPreStopCutByCancel(t *testing.T) {
	e := newEnv(t)
	h, _ := hooked(e)
	ctx, cancel := context.WithCancel(e.ctx)
	h.fn = func(hctx context.Context, _ *v1.LifecycleHandler) error { cancel(); <-hctx.Done(); return hctx.Err() }
	pod := newPod(v1.RestartPolicyAlways, "c")
	pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PreStop: handler("sleep")}
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	// A shorter grace period cancels the termination: it is started over,
	// the container is not stopped with the old grace.
	if err := e.m.KillPod(ctx, pod, e.status(pod), nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("KillPod: %v", err)
	}
	if len(e.f.Stops()) != 0 {
		t.Fatalf("stopped after a cancelled preStop: %+v", e.f.Stops())
	}
}

func TestPostStartHook(t *testing.T) {
	e := newEnv(t)
	h, rec := hooked(e)
	pod := newPod(v1.RestartPolicyAlways, "c")
	pod.Spec.Containers[0].Lifecycle = &v1.Lifecycle{PostStart: handler("poststart")}
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	if len(h.calls) != 1 || !strings.HasPrefix(h.calls[0], "poststart c stops=0 ip=10.") { // the sandbox IP
		t.Fatalf("hooks: %v", h.calls)
	}
	if e.latest(pod, "c").State != runtime.ContainerRunning {
		t.Fatal("container not running after its postStart hook")
	}
	_ = events(rec)

	// A failing hook kills the container; it then waits to be restarted.
	h.fn = func(context.Context, *v1.LifecycleHandler) error { return errors.New("boom") }
	if err := e.f.Exit(e.latest(pod, "c").ID, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sync(pod); err == nil {
		t.Fatal("sync succeeded although the postStart hook failed")
	}
	cur := e.latest(pod, "c")
	if cur.Attempt != 1 || cur.State != runtime.ContainerExited {
		t.Fatalf("container %+v; want attempt 1 killed", cur)
	}
	if w := e.m.Waiting(string(pod.UID))["c"]; w.Reason != "PostStartHookError" || w.Message != "hook failed" {
		t.Fatalf("waiting %+v", w)
	}
	ev := events(rec)
	for _, want := range []string{"Warning FailedPostStartHook PostStartHook failed", "Normal Killing FailedPostStartHook"} {
		if !strings.Contains(ev, want) {
			t.Errorf("no event %q in\n%s", want, ev)
		}
	}
}

func TestProbeFailuresRestart(t *testing.T) {
	five := int64(5)
	cases := []struct {
		name   string
		policy v1.RestartPolicy
		probe  func(*v1.Container, *v1.Probe)
		mgr    func(m *Manager) *results.Manager
		event  string
		grace  time.Duration
	}{
		{"liveness", v1.RestartPolicyAlways, func(c *v1.Container, p *v1.Probe) { c.LivenessProbe = p },
			func(m *Manager) *results.Manager { r := results.NewManager(); m.liveness = r; return r },
			"Normal Killing Container c failed liveness probe, will be restarted", 5 * time.Second},
		{"startup", v1.RestartPolicyOnFailure, func(c *v1.Container, p *v1.Probe) { c.StartupProbe = p },
			func(m *Manager) *results.Manager { r := results.NewManager(); m.startup = r; return r },
			"Normal Killing Container c failed startup probe, will be restarted", 5 * time.Second},
		{"liveness never", v1.RestartPolicyNever, func(c *v1.Container, p *v1.Probe) { c.LivenessProbe = p },
			func(m *Manager) *results.Manager { r := results.NewManager(); m.liveness = r; return r },
			"Normal Killing Container c failed liveness probe\n", 5 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			_, rec := hooked(e)
			r := tc.mgr(e.m)
			pod := newPod(tc.policy, "c")
			tc.probe(&pod.Spec.Containers[0], &v1.Probe{TerminationGracePeriodSeconds: &five})
			if _, err := e.sync(pod); err != nil {
				t.Fatal(err)
			}
			id := e.latest(pod, "c").ID
			r.Set(id, results.Success, pod.UID)
			if _, err := e.sync(pod); err != nil || len(e.f.Stops()) != 0 {
				t.Fatalf("a healthy container was stopped (%v)", err)
			}
			r.Set(id, results.Failure, pod.UID)
			if _, err := e.sync(pod); err != nil {
				t.Fatal(err)
			}
			if stops := e.f.Stops(); len(stops) != 1 || stops[0].ID != id || stops[0].Grace != tc.grace {
				t.Fatalf("stops %+v, want %s with the probe's grace %s", stops, id, tc.grace)
			}
			if ev := events(rec) + "\n"; !strings.Contains(ev, tc.event) {
				t.Fatalf("events:\n%s\nwant %q", ev, tc.event)
			}
		})
	}
}
