package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/logtest"
	"github.com/runlet/runlet/internal/pleg"
	"github.com/runlet/runlet/internal/poddir"
	"github.com/runlet/runlet/internal/podtest"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runtimefake"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
)

type env struct {
	t     *testing.T
	ctx   context.Context
	f     *runtimefake.Fake
	m     *Manager
	cache *pleg.Cache
	pleg  *pleg.PLEG
}

// newEnv builds a manager over the fake backend; opts change its Config.
func newEnv(t *testing.T, opts ...func(*Config)) *env {
	log := logtest.Discard()
	f := runtimefake.New()
	cache := pleg.NewCache()
	cfg := Config{Runtime: f, Recorder: record.NewFakeRecorder(1000), RuntimeName: "podman", Owner: "node-1", Log: log,
		Dirs: poddir.New(t.TempDir())}
	for _, o := range opts {
		o(&cfg)
	}
	return &env{t: t, ctx: context.Background(), f: f, cache: cache, m: NewManager(cfg), pleg: pleg.New(f, cache, time.Hour, log)}
}

// status relists the fake, as the PLEG does before each sync.
func (e *env) status(pod *v1.Pod) *runtime.PodStatus {
	e.pleg.Relist(e.ctx)
	return e.cache.Get(string(pod.UID))
}

func (e *env) sync(pod *v1.Pod) (Result, error) {
	return e.m.SyncPod(e.ctx, pod, e.status(pod))
}

// latest returns the newest container named name.
func (e *env) latest(pod *v1.Pod, name string) *runtime.Container {
	e.t.Helper()
	cur, _ := e.status(pod).Latest(name)
	if cur == nil {
		e.t.Fatalf("no container %s", name)
	}
	return cur
}

func newPod(policy v1.RestartPolicy, names ...string) *v1.Pod {
	p := podtest.New("p", podtest.Namespace("ns"), podtest.UID("uid-1"), podtest.RestartPolicy(policy))
	for _, n := range names {
		p.Spec.Containers = append(p.Spec.Containers, v1.Container{Name: n, Image: "img:1"})
	}
	return p
}

func TestSyncPodCreates(t *testing.T) {
	e := newEnv(t)
	pod := newPod(v1.RestartPolicyAlways, "a", "b")
	res, err := e.sync(pod)
	if err != nil || !res.Changed || res.Terminal {
		t.Fatalf("SyncPod = %+v, %v", res, err)
	}
	if sbs := e.f.Sandboxes(); len(sbs) != 1 || sbs[0].PodUID != "uid-1" || sbs[0].Labels[runtime.LabelPodName] != "p" ||
		sbs[0].Labels[runtime.LabelOwner] != "node-1" {
		t.Fatalf("sandboxes = %+v", sbs)
	}
	cs := e.f.Containers()
	if len(cs) != 2 {
		t.Fatalf("containers = %+v", cs)
	}
	for i, c := range cs {
		spec := &pod.Spec.Containers[i]
		if c.Name != spec.Name || c.State != runtime.ContainerRunning || c.SandboxID != e.f.Sandboxes()[0].ID ||
			c.Labels[runtime.LabelPodUID] != "uid-1" || c.Labels[runtime.LabelAttempt] != "0" ||
			c.Labels[runtime.LabelSpecHash] != HashContainer(spec) || c.Labels[runtime.LabelOwner] != "node-1" {
			t.Errorf("container %d = %+v", i, c)
		}
	}
	if n := e.f.Calls("StartContainer"); n != 2 {
		t.Errorf("StartContainer calls = %d; want 2", n)
	}
	// Everything runs: a second sync does nothing.
	res, err = e.sync(pod)
	if err != nil || res.Changed || res.RequeueAfter != 0 {
		t.Errorf("second SyncPod = %+v, %v; want nothing to do", res, err)
	}
	if e.f.Calls("CreateSandbox") != 1 || e.f.Calls("CreateContainer") != 2 || e.f.Calls("StartContainer") != 2 {
		t.Errorf("second sync touched the backend")
	}
}

func TestSyncPodCrashLoop(t *testing.T) {
	e := newEnv(t)
	pod := newPod(v1.RestartPolicyAlways, "c")
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	if err := e.f.Exit(e.latest(pod, "c").ID, 1); err != nil {
		t.Fatal(err)
	}
	// The first exit restarts at once, with the next attempt.
	if res, err := e.sync(pod); err != nil || !res.Changed {
		t.Fatalf("SyncPod after exit = %+v, %v", res, err)
	}
	cur := e.latest(pod, "c")
	if cur.Attempt != 1 || cur.State != runtime.ContainerRunning || cur.Labels[runtime.LabelAttempt] != "1" {
		t.Fatalf("restarted container = %+v", cur)
	}
	if err := e.f.Exit(cur.ID, 2); err != nil {
		t.Fatal(err)
	}
	// The second exit waits out the back-off.
	res, err := e.sync(pod)
	if !errors.Is(err, ErrBackOff) || res.Changed {
		t.Fatalf("SyncPod in back-off = %+v, %v; want ErrBackOff", res, err)
	}
	if res.RequeueAfter <= 5*time.Second || res.RequeueAfter > 10*time.Second {
		t.Errorf("RequeueAfter = %s; want the rest of 10s", res.RequeueAfter)
	}
	w := e.m.Waiting("uid-1")["c"]
	if w.Reason != "CrashLoopBackOff" || !strings.HasPrefix(w.Message, "back-off 10s restarting failed container=c pod=p_ns(uid-1)") {
		t.Errorf("waiting = %+v", w)
	}
	if n := len(e.f.Containers()); n != 2 || e.f.Calls("CreateContainer") != 2 {
		t.Errorf("%d containers, %d creates; want no restart in back-off", n, e.f.Calls("CreateContainer"))
	}
}

func TestSyncPodNeverIsTerminal(t *testing.T) {
	for _, code := range []int{0, 3} {
		e := newEnv(t)
		pod := newPod(v1.RestartPolicyNever, "c")
		if _, err := e.sync(pod); err != nil {
			t.Fatal(err)
		}
		if err := e.f.Exit(e.latest(pod, "c").ID, code); err != nil {
			t.Fatal(err)
		}
		res, err := e.sync(pod)
		if err != nil || !res.Terminal || res.Changed {
			t.Errorf("exit %d: SyncPod = %+v, %v; want Terminal", code, res, err)
		}
		if e.f.Calls("CreateContainer") != 1 {
			t.Errorf("exit %d: restarted under Never", code)
		}
	}
}

func TestSyncPodOnFailure(t *testing.T) {
	cases := []struct {
		code             int
		terminal, create bool
	}{{0, true, false}, {1, false, true}}
	for _, tc := range cases {
		e := newEnv(t)
		pod := newPod(v1.RestartPolicyOnFailure, "c")
		if _, err := e.sync(pod); err != nil {
			t.Fatal(err)
		}
		if err := e.f.Exit(e.latest(pod, "c").ID, tc.code); err != nil {
			t.Fatal(err)
		}
		res, err := e.sync(pod)
		if err != nil || res.Terminal != tc.terminal || (e.f.Calls("CreateContainer") == 2) != tc.create {
			t.Errorf("exit %d: SyncPod = %+v, %v, %d creates", tc.code, res, err, e.f.Calls("CreateContainer"))
		}
	}
}

func TestSyncPodImagePull(t *testing.T) {
	e := newEnv(t)
	pod := newPod(v1.RestartPolicyAlways, "c")
	pod.Spec.Containers[0].Image = "missing:1"
	e.f.SetImageMissing(true, "missing:1")
	res, err := e.sync(pod)
	if !errors.Is(err, runtime.ErrImageNotFound) || errors.Is(err, ErrBackOff) || res.RequeueAfter == 0 {
		t.Fatalf("SyncPod = %+v, %v; want an image error and a requeue", res, err)
	}
	if w := e.m.Waiting("uid-1")["c"]; w.Reason != "ErrImagePull" {
		t.Errorf("waiting = %+v; want ErrImagePull", w)
	}
	_, err = e.sync(pod)
	if !errors.Is(err, ErrBackOff) {
		t.Fatalf("second SyncPod error = %v; want ErrBackOff", err)
	}
	if w := e.m.Waiting("uid-1")["c"]; w.Reason != "ImagePullBackOff" {
		t.Errorf("waiting = %+v; want ImagePullBackOff", w)
	}
	// A look and a pull, then in back-off only a look (the kubelet checks
	// for the image before it checks the back-off).
	if n := e.f.Calls("EnsureImage"); n != 3 {
		t.Errorf("EnsureImage calls = %d; want 3 (no pull in back-off)", n)
	}
	if len(e.f.Containers()) != 0 || len(e.f.Sandboxes()) != 1 {
		t.Errorf("containers %v sandboxes %v; want the sandbox only", e.f.Containers(), e.f.Sandboxes())
	}
}

func TestSyncPodRecreatesNotReadySandbox(t *testing.T) {
	e := newEnv(t)
	pod := newPod(v1.RestartPolicyAlways, "c")
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	old := e.f.Sandboxes()[0].ID
	e.f.SetSandboxState(old, runtime.SandboxNotReady)
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	sbs, cs := e.f.Sandboxes(), e.f.Containers()
	if len(sbs) != 1 || sbs[0].ID == old || len(cs) != 1 || cs[0].SandboxID != sbs[0].ID || cs[0].State != runtime.ContainerRunning {
		t.Errorf("sandboxes %+v containers %+v; want a new sandbox with a running container", sbs, cs)
	}
	// As the kubelet counts it: the sandbox change restarted the container.
	if len(cs) == 1 && cs[0].Attempt != 1 {
		t.Errorf("container attempt %d in the new sandbox; want 1", cs[0].Attempt)
	}
}

// A sandbox that is not ready takes its containers with it; under
// OnFailure one that had succeeded does not run again in the new sandbox,
// one that was still running does, its restart counted.
func TestSyncPodNewSandboxKeepsRestartPolicy(t *testing.T) {
	e := newEnv(t)
	pod := e.lostSandbox(t)
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	if running := e.running(); len(running) != 1 || running[0] != "run@1" {
		t.Errorf("running in the new sandbox: %v; want run@1 alone", running)
	}
}

// TestNewSandboxAfterAFailedSync: a sync that replaced a sandbox that was
// not ready (a reboot) but did not get to start the containers in the new
// one leaves the syncs after it what they did, through a back-off too: the
// one that was running starts again, its restart counted once, and under
// OnFailure the one that had succeeded does not run again.
func TestNewSandboxAfterAFailedSync(t *testing.T) {
	e := newEnv(t)
	pod := e.lostSandbox(t)
	boom := errors.New("boom")
	e.f.Fail("CreateContainer", boom)
	if _, err := e.sync(pod); !errors.Is(err, boom) {
		t.Fatalf("sync error %v; want the failed create", err)
	}
	e.f.Fail("CreateContainer", nil)
	// The failed start counts for the back-off, as on the kubelet: the
	// next sync waits it out, and the one after it starts the container.
	if _, err := e.sync(pod); !errors.Is(err, ErrBackOff) {
		t.Fatalf("sync error %v; want the back-off", err)
	}
	e.m.crashBackoff.now = func() time.Time { return time.Now().Add(time.Minute) }
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	if running := e.running(); len(running) != 1 || running[0] != "run@1" {
		t.Errorf("running in the new sandbox: %v; want run@1 alone", running)
	}
}

func TestSyncPodFailures(t *testing.T) {
	boom := errors.New("boom")
	cases := []struct {
		method, reason string
	}{{"CreateSandbox", ""}, {"CreateContainer", "CreateContainerError"}, {"StartContainer", "RunContainerError"}}
	for _, tc := range cases {
		e := newEnv(t)
		e.f.Fail(tc.method, boom)
		pod := newPod(v1.RestartPolicyAlways, "c")
		if _, err := e.sync(pod); !errors.Is(err, boom) {
			t.Errorf("%s failing: SyncPod error = %v", tc.method, err)
		}
		if w := e.m.Waiting("uid-1")["c"]; w.Reason != tc.reason {
			t.Errorf("%s failing: waiting = %+v; want %q", tc.method, w, tc.reason)
		}
	}
}

// A container left created that cannot start is replaced by a new one, as the
// kubelet replaces a container in the created state.
func TestSyncPodReplacesCreatedThatCannotStart(t *testing.T) {
	e := newEnv(t)
	boom := errors.New("runc start failed")
	e.f.Fail("StartContainer", boom)
	pod := newPod(v1.RestartPolicyAlways, "c")
	if _, err := e.sync(pod); !errors.Is(err, boom) {
		t.Fatalf("first sync error = %v; want %v", err, boom)
	}
	stuck := e.latest(pod, "c")
	if stuck.State != runtime.ContainerCreated {
		t.Fatalf("container state %v; want created", stuck.State)
	}
	if _, err := e.sync(pod); !errors.Is(err, boom) {
		t.Fatalf("second sync error = %v; want %v", err, boom)
	}
	e.f.Fail("StartContainer", nil)
	if _, err := e.sync(pod); err != nil {
		t.Fatalf("third sync: %v", err)
	}
	cur := e.latest(pod, "c")
	if cur.ID == stuck.ID || cur.State != runtime.ContainerRunning {
		t.Errorf("container %s in state %v; want a new running container in place of %s", cur.ID, cur.State, stuck.ID)
	}
	for _, c := range e.f.Containers() {
		if c.ID == stuck.ID {
			t.Errorf("the container that could not start is still there")
		}
	}
}

// A first start that the backend could not give its sandbox (podman starts
// a pod's infra with its first container) is a failed sandbox creation, as
// on the kubelet: FailedCreatePodSandBox, no RunContainerError, and the
// sandbox removed so that the next sync makes a new one.
func TestSyncPodSandboxThatDidNotStart(t *testing.T) {
	rec := record.NewFakeRecorder(100)
	e := newEnv(t, func(c *Config) { c.Recorder = rec })
	e.f.Fail("StartContainer", fmt.Errorf("%w: applying cgroup configuration: cannot allocate memory", runtime.ErrSandboxStart))
	pod := newPod(v1.RestartPolicyAlways, "c")
	if _, err := e.sync(pod); !errors.Is(err, runtime.ErrSandboxStart) {
		t.Fatalf("sync error = %v; want the sandbox's", err)
	}
	if w, ok := e.m.Waiting(string(pod.UID))["c"]; ok {
		t.Errorf("container waiting %+v; want none of its own (the pod waits in ContainerCreating)", w)
	}
	var sandboxEvent bool
	for len(rec.Events) > 0 {
		ev := <-rec.Events
		sandboxEvent = sandboxEvent || strings.HasPrefix(ev, "Warning FailedCreatePodSandBox Failed to create pod sandbox: ") && strings.Contains(ev, "cgroup")
		if strings.Contains(ev, "RunContainerError") || strings.HasPrefix(ev, "Warning Failed ") {
			t.Errorf("event %q; want the sandbox's failure, not the container's", ev)
		}
	}
	if !sandboxEvent {
		t.Error("no FailedCreatePodSandBox event naming the cause")
	}
	if sbs := e.f.Sandboxes(); len(sbs) != 0 {
		t.Errorf("sandboxes %+v left; want the one that did not start removed", sbs)
	}
	e.f.Fail("StartContainer", nil)
	if _, err := e.sync(pod); err != nil {
		t.Fatalf("next sync: %v", err)
	}
	if cur := e.latest(pod, "c"); cur.State != runtime.ContainerRunning {
		t.Errorf("container %v after the retry; want running in a new sandbox", cur.State)
	}
}

// running lists the backend's running containers as name@attempt.
func (e *env) running() []string {
	var out []string
	for _, c := range e.f.Containers() {
		if c.State == runtime.ContainerRunning {
			out = append(out, fmt.Sprintf("%s@%d", c.Name, c.Attempt))
		}
	}
	return out
}

// lostSandbox runs an OnFailure pod whose container "done" succeeded and
// whose "run" runs, then takes its sandbox's readiness away, as a reboot
// does.
func (e *env) lostSandbox(t *testing.T) *v1.Pod {
	t.Helper()
	pod := newPod(v1.RestartPolicyOnFailure, "done", "run")
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	if err := e.f.Exit(e.latest(pod, "done").ID, 0); err != nil {
		t.Fatal(err)
	}
	e.f.SetSandboxState(e.f.Sandboxes()[0].ID, runtime.SandboxNotReady)
	return pod
}
