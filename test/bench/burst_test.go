package bench

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
)

// benchBursts creates bursts of pods from cfg.clients clients at once and times them to Running.
// The first size runs on every node in turn, each then measured at rest with its pods: memory, CPU
// (and on runlet on podman the relist cost and its heap); the other sizes run on runlet on podman
// only, against raw podman's.
func benchBursts(nodes []*node, r *results) {
	cfg := nodes[0].cfg
	size := cfg.bursts[0]
	inTurns(nodes, 1, func(n *node, _ int) {
		r.notes = append(r.notes, waitQuiet(fmt.Sprintf("%s: burst of %d", n.agentName(), size), cfg.quiet))
		pods := n.burst(size, r)
		s := r.stacks[n.kind]
		progress("%s: %d pods at rest: settling %v, then CPU over %v", n.agentName(), size, cfg.settle, cfg.cpuWindow)
		n.sleepSettle()
		s.memN = n.readStack(size)
		if n.kind == kindPodman {
			r.memN = readMem(n.t, n.rl.PID(), n.rl.MetricsURL())
		}
		s.rest = n.measureStackCPU()
		progress("%s: %d pods at rest: agent RSS %.1f MiB, PSS %.1f MiB; stack %s; CPU agent %.2f %%, stack %.2f %%, host %.2f %%",
			n.agentName(), size, s.memN.agent.rss, s.memN.agent.pss, s.memN, s.rest.agent, s.rest.stack, s.rest.host)
		if n.kind == kindPodman {
			r.relist = relistCost(n, size)
			r.notes = append(r.notes, heapTop(n, size))
		}
		n.gone(pods)
	})
	for _, size := range cfg.bursts[1:] {
		nodes[0].gone(nodes[0].burst(size, r))
	}
}

// burst creates size pods at once on the node and records its pods/s.
func (n *node) burst(size int, r *results) []*v1.Pod {
	progress("%s: burst of %d pods, %d clients", n.agentName(), size, n.cfg.clients)
	t0, pods := n.createMany(fmt.Sprintf("b%d", size), size, nil)
	last := n.waitAll("running", pods, 10*time.Minute)
	rate := float64(size) / last.Sub(t0).Seconds()
	if size == n.cfg.bursts[0] {
		r.stacks[n.kind].burst = rate
	}
	if n.kind == kindPodman {
		r.burst[size] = rate
	}
	progress("%s: burst of %d: %.2f pods/s", n.agentName(), size, rate)
	return pods
}
