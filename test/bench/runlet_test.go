package bench

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/runlet/runlet/internal/runtime/podman"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
	"github.com/runlet/runlet/test/e2e/framework"
)

const labelPodUID = framework.LabelPodUID

// benchRunlet measures runlet on the podman service the raw figures were taken on.
func benchRunlet(t *testing.T, ctx context.Context, cfg config, be *podman.Backend, r *results) {
	level := cmp.Or(os.Getenv("RUNLET_BENCH_LOG_LEVEL"), "info")
	rl := framework.StartRunlet(t, framework.RunletOptions{
		PodmanSocket: be.Client().Socket(), LogLevel: level, MaxPods: max(cfg.maxBurst(), cfg.scale) + cfg.n + 10,
	})
	if keep := os.Getenv("RUNLET_BENCH_LOG"); keep != "" { // runlet's log outlives the test's temp dir
		t.Cleanup(func() {
			if err := os.WriteFile(keep, []byte(rl.Log()), 0o644); err != nil {
				t.Log(err)
			}
		})
	}
	ns := framework.Namespace(t)
	n := &node{t: t, ctx: ctx, cfg: cfg, rl: rl, be: be, c: be.Client(), ns: ns,
		api: framework.Get(t).Client.CoreV1().Pods(ns), w: watchPods(t, ns)}
	progress("runlet %s (pid %d) is Ready; settling %v", rl.NodeName, rl.PID(), cfg.settle)
	time.Sleep(cfg.settle)
	r.mem0 = readMem(t, rl.PID(), rl.MetricsURL())
	benchFloor(n, r)
	benchSecrets(n, r)

	_, warm := n.create("warm-up")
	n.wait("running", warm.Name, 2*time.Minute)
	seq := benchSequential(n, r)
	benchExits(n, seq, r)
	n.gone(append(seq, warm))
	benchGraceDelete(n, r)
	benchResize(n, r)
	for i, size := range cfg.bursts {
		benchBurst(n, size, i == 0, r)
	}
	if cfg.scale > 0 {
		benchScale(n, r)
	}
	benchProbes(n, r)
	r.relistRunletN, r.relistRunlet = relistHistogram(rl.MetricsURL())
}

// benchSequential starts cfg.n pods one after the other: API create → Running seen by the watch.
func benchSequential(n *node, r *results) []*v1.Pod {
	progress("runlet: %d sequential pod starts", n.cfg.n)
	ops0, _ := scrapeOps(n.rl.MetricsURL())
	var seq []*v1.Pod
	var h hops
	for i := range n.cfg.n {
		t0, p := n.create(fmt.Sprintf("s-%d", i))
		running := n.wait("running", p.Name, 2*time.Minute)
		bound := n.wait("bound", p.Name, time.Second)
		r.start = append(r.start, running.Sub(t0))
		r.bound = append(r.bound, bound.Sub(t0))
		h.add(n, p.Name, t0, bound, running)
		seq = append(seq, p)
	}
	if ops1, err := scrapeOps(n.rl.MetricsURL()); err == nil {
		r.notes = append(r.notes, opsReport("sequential starts", ops0, ops1, n.cfg.n))
	}
	r.notes = append(r.notes, h.report())
	return seq
}

// benchExits kills each pod's container and times its end → terminated state in the API.
func benchExits(n *node, pods []*v1.Pod, r *results) {
	progress("runlet: %d container exits (exit → API terminated)", len(pods))
	for _, p := range pods {
		got, err := n.api.Get(n.ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			n.t.Fatal(err)
		}
		if len(got.Status.ContainerStatuses) != 1 {
			n.t.Fatalf("pod %s: container statuses %+v", p.Name, got.Status.ContainerStatuses)
		}
		id := strings.TrimPrefix(got.Status.ContainerStatuses[0].ContainerID, "podman://")
		t0 := time.Now()
		if err := n.c.KillContainer(n.ctx, id, "SIGKILL"); err != nil {
			n.t.Fatal(err)
		}
		at := n.wait("exited", p.Name, time.Minute)
		r.kill = append(r.kill, at.Sub(t0))
		in, err := n.c.InspectContainer(n.ctx, id)
		if err != nil {
			n.t.Fatal(err)
		}
		// The container's own end, as conmon recorded it: the kill call
		// returns only after podman has waited for it.
		r.exit = append(r.exit, at.Sub(in.State.FinishedAt))
	}
}

// benchGraceDelete deletes pods whose container exits on SIGTERM with the default grace period.
func benchGraceDelete(n *node, r *results) {
	progress("runlet: %d deletes with the default grace period (container exits on SIGTERM → API object gone)", n.cfg.n)
	var graceful []*v1.Pod
	for i := range n.cfg.n {
		p := framework.PodFor(n.rl.NodeName, n.ns, fmt.Sprintf("g-%d", i),
			framework.Busybox("c", "sh", "-c", `trap "exit 0" TERM; sleep 3600 & wait`))
		p.Spec.TerminationGracePeriodSeconds = nil // the API's default, 30 s
		created, err := n.api.Create(n.ctx, p, metav1.CreateOptions{})
		if err != nil {
			n.t.Fatalf("create pod %s: %v", p.Name, err)
		}
		graceful = append(graceful, created)
	}
	for _, p := range graceful {
		n.wait("running", p.Name, 2*time.Minute)
	}
	for _, p := range graceful {
		t0 := time.Now()
		if err := n.api.Delete(n.ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			n.t.Fatalf("delete pod %s: %v", p.Name, err)
		}
		r.graceDel = append(r.graceDel, n.wait("gone", p.Name, time.Minute).Sub(t0))
	}
}

func deletePod(t *testing.T, ctx context.Context, api corev1.PodInterface, name string) {
	zero := int64(0)
	if err := api.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatalf("delete pod %s: %v", name, err)
	}
}

// waitClean polls podman until no pod carries the pod's UID and returns when that was seen.
func waitClean(t *testing.T, ctx context.Context, c *libpod.Client, p *v1.Pod, timeout time.Duration) time.Time {
	deadline := time.Now().Add(timeout)
	for {
		ps, err := c.ListPods(ctx, labelPodUID+"="+string(p.UID))
		if err == nil && len(ps) == 0 {
			return time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("podman pod of %s still there after %v (err %v)", p.Name, timeout, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
