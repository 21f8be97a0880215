package bench

import (
	"cmp"
	"context"
	"os"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/runlet/runlet/internal/runtime/podman"
	"github.com/runlet/runlet/test/e2e/framework"
)

// benchNodes runs the same workloads on runlet on podman, runlet on runc and the kubelet on
// containerd, side by side on the bench's control plane, taking turns; runlet on podman's own
// figures (the framework's floor, Secrets, exits, resizes, relists, its heap, scale) are taken on it
// while the other nodes idle at 0 pods.
func benchNodes(t *testing.T, ctx context.Context, cfg config, be *podman.Backend, r *results) {
	nodes := startNodes(t, ctx, cfg, be)
	pm := nodes[0]
	progress("%d nodes Ready; settling %v", len(nodes), cfg.settle)
	time.Sleep(cfg.settle)
	for _, n := range nodes {
		r.stacks[n.kind].mem0 = n.readStack(0)
		progress("%s at 0 pods: agent RSS %.1f MiB, PSS %.1f MiB; stack %s", n.kind,
			r.stacks[n.kind].mem0.agent.rss, r.stacks[n.kind].mem0.agent.pss, r.stacks[n.kind].mem0)
	}
	r.mem0 = readMem(t, pm.rl.PID(), pm.rl.MetricsURL())
	progress("the host with every node at 0 pods: CPU over %v", cfg.cpuWindow)
	r.hostRest = measureCPU(nil, cfg.cpuWindow)
	benchFloor(pm, r)
	benchSecrets(pm, r)

	warm := map[*node]*v1.Pod{}
	for _, n := range nodes {
		_, p := n.create("warm-up")
		n.wait("running", p.Name, 2*time.Minute)
		warm[n] = p
	}
	seq := benchSequential(nodes, r)
	benchExits(pm, seq[pm], r)
	for _, n := range nodes {
		n.gone(append(seq[n], warm[n]))
	}
	benchDeletes(nodes, r)
	benchGraceDeletes(nodes, r)
	benchResize(pm, r)
	benchBursts(nodes, r)
	if cfg.scale > 0 {
		benchScale(pm, r)
	}
	benchProbes(nodes, r, probeHTTP)
	benchProbes(nodes, r, probeExec)
	r.relistRunletN, r.relistRunlet = relistHistogram(pm.rl.MetricsURL())
}

// startNodes starts runlet on the bench's podman service, runlet on runc and the kubelet on
// containerd (each unless its knob leaves it out), runlet on podman first.
func startNodes(t *testing.T, ctx context.Context, cfg config, be *podman.Backend) []*node {
	level := cmp.Or(os.Getenv("RUNLET_BENCH_LOG_LEVEL"), "info")
	rl := framework.StartRunlet(t, framework.RunletOptions{
		PodmanSocket: be.Client().Socket(), LogLevel: level, MaxPods: max(cfg.maxBurst(), cfg.scale, cfg.maxPods()) + cfg.n,
	})
	if keep := os.Getenv("RUNLET_BENCH_LOG"); keep != "" { // runlet's log outlives the test's temp dir
		t.Cleanup(func() {
			if err := os.WriteFile(keep, []byte(rl.Log()), 0o644); err != nil {
				t.Log(err)
			}
		})
	}
	pm := newNode(t, ctx, cfg, kindPodman, rl.NodeName)
	pm.rl, pm.be, pm.c = rl, be, be.Client()
	progress("runlet on podman: node %s (pid %d) Ready", rl.NodeName, rl.PID())
	nodes := []*node{pm}
	if cfg.runc {
		rc := framework.StartRunlet(t, framework.RunletOptions{Runtime: framework.RuntimeRunc, LogLevel: level, MaxPods: cfg.maxPods()})
		n := newNode(t, ctx, cfg, kindRunc, rc.NodeName)
		n.rl = rc
		progress("runlet on runc: node %s (pid %d) Ready", rc.NodeName, rc.PID())
		nodes = append(nodes, n)
	}
	if cfg.kubelet {
		k := startKubelet(t, cfg)
		n := newNode(t, ctx, cfg, kindKubelet, k.name)
		n.kl = k
		progress("the kubelet on containerd: node %s (kubelet pid %d, containerd pid %d) Ready", k.name, k.pid("kubelet"), k.pid("containerd"))
		nodes = append(nodes, n)
	}
	return nodes
}

// inTurns runs f on every node, round after round, each round beginning one node further on
// (A B C, B C A, …): no node always goes first, and a drift of the host's speed is shared.
func inTurns(nodes []*node, rounds int, f func(n *node, round int)) {
	for i := range rounds {
		for j := range nodes {
			f(nodes[(i+j)%len(nodes)], i)
		}
	}
}
