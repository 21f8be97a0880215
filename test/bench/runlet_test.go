package bench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/runlet/runlet/test/e2e/framework"
)

const labelPodUID = framework.LabelPodUID

// benchSequential starts cfg.n pods on each node one after the other, the nodes taking turns: API
// create → Running seen by the watch. Each start on runlet on podman and on the kubelet is also split
// hop by hop, and their runtime calls are counted.
func benchSequential(nodes []*node, r *results) map[*node][]*v1.Pod {
	cfg := nodes[0].cfg
	progress("%d sequential pod starts on each of %d nodes, in turns", cfg.n, len(nodes))
	before := map[*node]histos{}
	for _, n := range nodes {
		before[n] = n.runtimeOps()
	}
	k0 := kubeletStartMetrics(nodes)
	seq := map[*node][]*v1.Pod{}
	var hp podmanHops
	var hk kubeletHops
	inTurns(nodes, cfg.n, func(n *node, i int) {
		t0, p := n.create(fmt.Sprintf("s-%d", i))
		running := n.wait("running", p.Name, 2*time.Minute)
		bound := n.wait("bound", p.Name, time.Second)
		r.stacks[n.kind].start = append(r.stacks[n.kind].start, running.Sub(t0))
		switch n.kind {
		case kindPodman:
			r.bound = append(r.bound, bound.Sub(t0))
			hp.add(n, p.Name, t0, bound, running)
		case kindKubelet:
			hk.add(n, p, t0, bound, running)
		}
		seq[n] = append(seq[n], p)
	})
	for _, n := range nodes {
		if ops := n.runtimeOps(); len(ops) > 0 {
			r.notes = append(r.notes, opsReport(fmt.Sprintf("sequential starts: runtime calls by %s", n.agentName()), before[n], ops, cfg.n))
		}
	}
	r.notes = append(r.notes, hp.report(), hk.report(k0, kubeletStartMetrics(nodes)))
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

// benchDeletes deletes cfg.n running pods on each node with grace 0, the nodes taking turns: delete →
// the API object gone and the node's sandbox of the pod removed. The object goes at once; the time
// is the node's.
func benchDeletes(nodes []*node, r *results) {
	cfg := nodes[0].cfg
	progress("%d deletes (grace 0 → API object gone and the sandbox removed) on each node, in turns", cfg.n)
	pods := runningOn(nodes, "d", nil)
	inTurns(nodes, cfg.n, func(n *node, i int) {
		p := pods[n][i]
		t0 := time.Now()
		deletePod(n.t, n.ctx, n.api, p.Name)
		clean := n.waitClean(p, time.Minute).Sub(t0)
		inAPI := n.wait("gone", p.Name, time.Minute).Sub(t0)
		r.stacks[n.kind].del = append(r.stacks[n.kind].del, max(clean, inAPI))
	})
}

// benchGraceDeletes deletes cfg.n pods on each node whose container exits on SIGTERM, with the default
// grace period, the nodes taking turns: delete → the API object gone, which the node removes once
// the container has ended.
func benchGraceDeletes(nodes []*node, r *results) {
	cfg := nodes[0].cfg
	progress("%d deletes with the default grace period (container exits on SIGTERM → API object gone) on each node, in turns", cfg.n)
	pods := runningOn(nodes, "g", func(n *node, name string) *v1.Pod {
		p := n.pod(name, framework.Busybox("c", "sh", "-c", `trap "exit 0" TERM; sleep 3600 & wait`))
		p.Spec.TerminationGracePeriodSeconds = nil // the API's default, 30 s
		return p
	})
	inTurns(nodes, cfg.n, func(n *node, i int) {
		p := pods[n][i]
		t0 := time.Now()
		if err := n.api.Delete(n.ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			n.t.Fatalf("delete pod %s: %v", p.Name, err)
		}
		gone := n.wait("gone", p.Name, time.Minute).Sub(t0)
		r.stacks[n.kind].graceDel = append(r.stacks[n.kind].graceDel, gone)
		n.waitClean(p, time.Minute)
	})
}

// runningOn creates cfg.n pods named prefix-<i> on each node (build nil: busybox `sleep 3600`) and
// waits until all are Running.
func runningOn(nodes []*node, prefix string, build func(n *node, name string) *v1.Pod) map[*node][]*v1.Pod {
	out := map[*node][]*v1.Pod{}
	for _, n := range nodes {
		var b func(string) *v1.Pod
		if build != nil {
			b = func(name string) *v1.Pod { return build(n, name) }
		}
		_, out[n] = n.createMany(prefix, n.cfg.n, b)
	}
	for _, n := range nodes {
		n.waitAll("running", out[n], 5*time.Minute)
	}
	return out
}

func deletePod(t *testing.T, ctx context.Context, api corev1.PodInterface, name string) {
	zero := int64(0)
	if err := api.Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatalf("delete pod %s: %v", name, err)
	}
}
