package kuberuntime

import (
	"errors"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/prober/results"
	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
)

// withSidecars adds init containers in order; names in sidecars get
// restartPolicy Always.
func withSidecars(pod *v1.Pod, sidecars map[string]bool, names ...string) *v1.Pod {
	always := v1.ContainerRestartPolicyAlways
	for _, n := range names {
		c := v1.Container{Name: n, Image: "img:1"}
		if sidecars[n] {
			c.RestartPolicy = &always
		}
		pod.Spec.InitContainers = append(pod.Spec.InitContainers, c)
	}
	return pod
}

func (e *env) has(pod *v1.Pod, name string) bool {
	c, _ := e.status(pod).Latest(name)
	return c != nil
}

func (e *env) mustSync(pod *v1.Pod) Result {
	e.t.Helper()
	res, err := e.sync(pod)
	if err != nil {
		e.t.Fatal(err)
	}
	return res
}

func (e *env) wantStarted(pod *v1.Pod, started []string, notYet ...string) {
	e.t.Helper()
	for _, n := range started {
		if c, _ := e.status(pod).Latest(n); c == nil || c.State != runtime.ContainerRunning && c.State != runtime.ContainerExited {
			e.t.Errorf("%s not started", n)
		}
	}
	for _, n := range notYet {
		if e.has(pod, n) {
			e.t.Errorf("%s started too early", n)
		}
	}
}

// TestSidecarsStartInOrder: a sidecar lets the next init container start
// once it runs, a regular init container once it exited 0; the sidecars keep
// running beside the regular container.
func TestSidecarsStartInOrder(t *testing.T) {
	e := newEnv(t)
	pod := withSidecars(newPod(v1.RestartPolicyAlways, "main"), map[string]bool{"sc1": true, "sc3": true}, "sc1", "init2", "sc3")
	e.mustSync(pod)
	e.wantStarted(pod, []string{"sc1"}, "init2", "sc3", "main")
	e.mustSync(pod)
	e.wantStarted(pod, []string{"sc1", "init2"}, "sc3", "main")
	if res := e.mustSync(pod); res.Changed {
		t.Error("a sync while init2 runs changed something")
	}
	if err := e.f.Exit(e.latest(pod, "init2").ID, 0); err != nil {
		t.Fatal(err)
	}
	e.mustSync(pod)
	e.wantStarted(pod, []string{"sc3"}, "main")
	e.mustSync(pod)
	e.wantStarted(pod, []string{"main"})
	for _, n := range []string{"sc1", "sc3", "main"} {
		if c := e.latest(pod, n); c.State != runtime.ContainerRunning || c.Attempt != 0 {
			t.Errorf("%s: %s attempt %d; want the first instance running", n, c.State, c.Attempt)
		}
	}
	if res := e.mustSync(pod); res.Changed {
		t.Error("a sync of the running pod changed something")
	}
}

// TestSidecarStartupProbeGates: a sidecar with a startup probe holds the
// next container back until the probe succeeded; without a prober, for good.
func TestSidecarStartupProbeGates(t *testing.T) {
	probe := &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}}
	newSidecarPod := func() *v1.Pod {
		pod := withSidecars(newPod(v1.RestartPolicyAlways, "main"), map[string]bool{"sc": true}, "sc")
		pod.Spec.InitContainers[0].StartupProbe = probe
		return pod
	}

	e := newEnv(t) // no prober
	pod := newSidecarPod()
	for range 3 {
		e.mustSync(pod)
	}
	e.wantStarted(pod, []string{"sc"}, "main")

	e = newEnv(t)
	startup := results.NewManager()
	e.m.startup = startup
	pod = newSidecarPod()
	e.mustSync(pod)
	e.mustSync(pod)
	e.wantStarted(pod, []string{"sc"}, "main")
	id := e.latest(pod, "sc").ID
	startup.Set(id, results.Unknown, pod.UID)
	e.mustSync(pod)
	e.wantStarted(pod, nil, "main")
	startup.Set(id, results.Success, pod.UID)
	e.mustSync(pod)
	e.wantStarted(pod, []string{"main"})
}

// TestSidecarRestartsWithBackOff: once the pod is initialized, an exited
// sidecar is restarted (whatever the pod's restart policy), then held by the
// restart back-off, while the regular container goes on.
func TestSidecarRestartsWithBackOff(t *testing.T) {
	e := newEnv(t)
	pod := withSidecars(newPod(v1.RestartPolicyNever, "main"), map[string]bool{"sc": true}, "sc")
	e.mustSync(pod)
	e.mustSync(pod)
	e.wantStarted(pod, []string{"sc", "main"})
	if err := e.f.Exit(e.latest(pod, "sc").ID, 1); err != nil {
		t.Fatal(err)
	}
	e.mustSync(pod)
	if c := e.latest(pod, "sc"); c.State != runtime.ContainerRunning || c.Attempt != 1 {
		t.Fatalf("sidecar %s attempt %d; want restarted", c.State, c.Attempt)
	}
	if err := e.f.Exit(e.latest(pod, "sc").ID, 1); err != nil {
		t.Fatal(err)
	}
	res, err := e.sync(pod)
	if !errors.Is(err, ErrBackOff) || res.RequeueAfter <= 0 {
		t.Fatalf("SyncPod = %+v, %v; want the back-off", res, err)
	}
	if w := e.m.Waiting(string(pod.UID))["sc"]; w.Reason != "CrashLoopBackOff" {
		t.Errorf("sidecar waiting %+v; want CrashLoopBackOff", w)
	}
	if c := e.latest(pod, "main"); c.State != runtime.ContainerRunning || c.Attempt != 0 {
		t.Errorf("main %s attempt %d; want untouched", c.State, c.Attempt)
	}
	if res.Terminal {
		t.Error("pod terminal while its regular container runs")
	}
}

// TestPodWithSidecarsEnds: under restartPolicy Never the pod is done once
// its regular containers exited, sidecars running or not.
func TestPodWithSidecarsEnds(t *testing.T) {
	e := newEnv(t)
	pod := withSidecars(newPod(v1.RestartPolicyNever, "main"), map[string]bool{"sc": true}, "sc")
	e.mustSync(pod)
	e.mustSync(pod)
	if err := e.f.Exit(e.latest(pod, "main").ID, 0); err != nil {
		t.Fatal(err)
	}
	if res := e.mustSync(pod); !res.Terminal {
		t.Fatal("pod not terminal after its only regular container exited")
	}
	if c := e.latest(pod, "sc"); c.State != runtime.ContainerRunning {
		t.Errorf("sidecar %s; the pod's termination stops it, not the sync", c.State)
	}
}

// TestKillPodStopsSidecarsLast: the regular containers stop first, then the
// sidecars in reverse order; a sidecar that waited for its turn still gets
// the rest of the grace period, at least 2 s.
func TestKillPodStopsSidecarsLast(t *testing.T) {
	e := newEnv(t)
	pod := withSidecars(newPod(v1.RestartPolicyAlways, "main"), map[string]bool{"sc1": true, "sc2": true}, "sc1", "sc2")
	for range 3 {
		e.mustSync(pod)
	}
	e.wantStarted(pod, []string{"sc1", "sc2", "main"})
	ids := map[string]string{}
	for _, n := range []string{"sc1", "sc2", "main"} {
		ids[e.latest(pod, n).ID] = n
	}
	if err := e.m.KillPod(e.ctx, pod, e.status(pod), nil); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, s := range e.f.Stops() {
		order = append(order, ids[s.ID])
		if s.Grace < 2*time.Second || s.Grace > 30*time.Second {
			t.Errorf("%s stopped with grace %s", ids[s.ID], s.Grace)
		}
	}
	if len(order) != 3 || order[0] != "main" || order[1] != "sc2" || order[2] != "sc1" {
		t.Errorf("stop order %v; want [main sc2 sc1]", order)
	}
}
