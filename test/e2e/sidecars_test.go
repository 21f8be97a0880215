package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
)

// TestSidecars runs native sidecars (init containers with restartPolicy
// Always) on one runlet node, with the default grace period.
func TestSidecars(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	t.Run("OrderRestartAndStop", func(t *testing.T) { t.Parallel(); testSidecarOrder(t, rl.NodeName, ns) })
	t.Run("StopAfterMainExits", func(t *testing.T) { t.Parallel(); testSidecarsStopAfterMain(t, rl.NodeName, ns) })
	t.Run("InitStatusInKubectl", func(t *testing.T) { t.Parallel(); testInitStatusColumn(t, rl.NodeName, ns) })
}

// testInitStatusColumn: kubectl reads the init container statuses as it
// does a kubelet's: Init:N/M while they run, Init:CrashLoopBackOff when one
// fails, PodInitializing once they are done and the app container is not up.
func testInitStatusColumn(t *testing.T, node, ns string) {
	waiting := framework.PodFor(node, ns, "init-waits", framework.Busybox("main", "sleep", "3600"))
	waiting.Spec.InitContainers = []v1.Container{
		sidecar("sc", "sleep 3600"),
		framework.Busybox("init1", "true"),
		framework.Busybox("init2", "sleep", "3600"),
	}
	failing := framework.PodFor(node, ns, "init-fails", framework.Busybox("main", "sleep", "3600"))
	failing.Spec.InitContainers = []v1.Container{framework.Busybox("init1", "false")}
	framework.CreatePod(t, waiting)
	framework.CreatePod(t, failing)
	column := func(name string) (string, error) {
		out, err := framework.KubectlE("-n", ns, "get", "pod", name, "--no-headers")
		if f := strings.Fields(out); len(f) >= 3 {
			return f[2], err
		}
		return out, err
	}
	for name, want := range map[string]string{"init-waits": "Init:2/3", "init-fails": "Init:CrashLoopBackOff"} {
		framework.Eventually(t, 90*time.Second, name+" shown as "+want, func() (bool, error) {
			got, err := column(name)
			return got == want, err
		})
	}
}

// onTerm runs script in the background and exits 0 at once on SIGTERM: a
// shell as PID 1 otherwise ignores it.
func onTerm(script string) []string {
	return []string{"sh", "-c", `trap "exit 0" TERM; ` + script + ` & wait`}
}

func sidecar(name string, script string) v1.Container {
	c := framework.Busybox(name, onTerm(script)...)
	always := v1.ContainerRestartPolicyAlways
	c.RestartPolicy = &always
	return c
}

// defaultGrace leaves the pod at the API's default termination grace period (30 s).
func defaultGrace(p *v1.Pod) *v1.Pod {
	p.Spec.TerminationGracePeriodSeconds = nil
	return p
}

func initStatus(p *v1.Pod, name string) *v1.ContainerStatus {
	for i := range p.Status.InitContainerStatuses {
		if p.Status.InitContainerStatuses[i].Name == name {
			return &p.Status.InitContainerStatuses[i]
		}
	}
	return nil
}

// testSidecarOrder: sidecars start in order, each gating the next, keep
// running with the main container, restart when they exit, and stop after
// the main container, in reverse order, when the pod is deleted.
func testSidecarOrder(t *testing.T, node, ns string) {
	// sc1 serves on :8001; init2 succeeds only if it can fetch from sc1, so
	// sc1 runs while init2 does.
	pod := defaultGrace(framework.PodFor(node, ns, "sidecars", framework.Busybox("main", onTerm("sleep 3600")...)))
	pod.Spec.InitContainers = []v1.Container{
		sidecar("sc1", `mkdir -p /tmp/w && echo sc1 > /tmp/w/index.html && httpd -f -p 8001 -h /tmp/w`),
		framework.Busybox("init2", "sh", "-c", `for i in $(seq 100); do wget -q -O- http://127.0.0.1:8001/ && exit 0; sleep 0.1; done; exit 1`),
		sidecar("sc3", "sleep 3600"),
	}
	created := framework.CreatePod(t, pod)
	p := framework.WaitForPodReady(t, ns, pod.Name, 120*time.Second)
	if p.Status.Phase != v1.PodRunning {
		t.Fatalf("phase %s", p.Status.Phase)
	}
	for _, n := range []string{"sc1", "sc3"} {
		if cs := initStatus(p, n); cs == nil || cs.State.Running == nil || !cs.Ready || cs.RestartCount != 0 {
			t.Errorf("sidecar %s: %+v; want running, ready, never restarted", n, cs)
		}
	}
	if cs := initStatus(p, "init2"); cs == nil || cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 0 {
		t.Errorf("init2: %+v; want terminated 0", cs)
	}

	in := framework.NewestRuns(t, created.UID)
	for _, n := range []string{"sc1", "init2", "sc3", "main"} {
		if _, ok := in[n]; !ok {
			t.Fatalf("containers %v; want sc1, init2, sc3 and main", in)
		}
	}
	if !in["sc1"].StartedAt.Before(in["init2"].StartedAt) {
		t.Errorf("init2 started %v, before sc1 %v", in["init2"].StartedAt, in["sc1"].StartedAt)
	}
	if !in["init2"].FinishedAt.Before(in["sc3"].StartedAt) {
		t.Errorf("sc3 started %v, before init2 finished %v", in["sc3"].StartedAt, in["init2"].FinishedAt)
	}
	if !in["sc3"].StartedAt.Before(in["main"].StartedAt) {
		t.Errorf("main started %v, before sc3 %v", in["main"].StartedAt, in["sc3"].StartedAt)
	}

	// sc1 dies: it is restarted, the main container is left alone.
	framework.KillContainer(t, initStatus(p, "sc1").ContainerID)
	p = framework.WaitForPod(t, ns, pod.Name, 60*time.Second, func(p *v1.Pod) bool {
		cs := initStatus(p, "sc1")
		return cs != nil && cs.RestartCount == 1 && cs.State.Running != nil
	})
	if last := initStatus(p, "sc1").LastTerminationState.Terminated; last == nil || last.ExitCode != 137 {
		t.Errorf("sc1 last state %+v; want its SIGKILL", last)
	}
	if cs := p.Status.ContainerStatuses[0]; cs.RestartCount != 0 || cs.State.Running == nil {
		t.Errorf("main %+v; want it untouched", cs)
	}

	// Deleted: main first, then sc3, then sc1.
	exits := framework.RecordExits(t, created.UID)
	framework.DeletePod(t, ns, pod.Name, nil)
	framework.WaitForPodGone(t, ns, pod.Name, 60*time.Second)
	if died := exits.Order("sc1", "sc3", "main"); strings.Join(died, ",") != "main,sc3,sc1" {
		t.Errorf("containers died in order %v; want main, sc3, sc1", died)
	}
}

// testSidecarsStopAfterMain: under restartPolicy Never the pod ends when its
// main container exits; its sidecars are then stopped in reverse order and
// the pod Succeeds.
func testSidecarsStopAfterMain(t *testing.T, node, ns string) {
	pod := defaultGrace(framework.PodFor(node, ns, "sidecars-end", framework.Busybox("main", "sh", "-c", "sleep 2")))
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	pod.Spec.InitContainers = []v1.Container{sidecar("sc1", "sleep 3600"), sidecar("sc2", "sleep 3600")}
	created := framework.CreatePod(t, pod)
	p := framework.WaitForPodPhase(t, ns, pod.Name, v1.PodSucceeded, 120*time.Second)
	for _, n := range []string{"sc1", "sc2"} {
		if cs := initStatus(p, n); cs == nil || cs.State.Terminated == nil {
			t.Errorf("sidecar %s: %+v; want terminated", n, cs)
		}
	}
	in := framework.NewestRuns(t, created.UID)
	if !in["main"].FinishedAt.Before(in["sc2"].FinishedAt) || !in["sc2"].FinishedAt.Before(in["sc1"].FinishedAt) {
		t.Errorf("finished main %v, sc2 %v, sc1 %v; want in that order",
			in["main"].FinishedAt, in["sc2"].FinishedAt, in["sc1"].FinishedAt)
	}
	for _, n := range []string{"sc1", "sc2"} {
		if in[n].ExitCode != 0 {
			t.Errorf("%s exited %d; want 0 (stopped by SIGTERM, not killed)", n, in[n].ExitCode)
		}
	}
}
