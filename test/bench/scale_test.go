package bench

import "time"

// benchScale (RUNLET_BENCH_SCALE) puts cfg.scale pods on the node, waits
// until every one is Running and Ready, and measures the node at rest: CPU,
// memory and the relist cost, to set beside the first burst's.
func benchScale(n *node, r *results) {
	progress("runlet: scale, %d pods, %d clients", n.cfg.scale, n.cfg.clients)
	t0, pods := n.createMany("scale", n.cfg.scale, nil)
	last := n.waitAll("ready", pods, 15*time.Minute)
	r.scaleReady = last.Sub(t0)
	progress("runlet: %d pods Running and Ready after %v: settling %v, then CPU over %v",
		n.cfg.scale, r.scaleReady.Round(time.Second), n.cfg.settle, n.cfg.cpuWindow)
	r.scaleRest = atRest(n.t, n.cfg, n.rl.PID(), n.be.ServicePID(), n.rl.MetricsURL())
	r.scaleRelist = relistCost(n, n.cfg.scale)
	progress("runlet: %d pods at rest: runlet CPU %.2f %%, podman service %.2f %%; runlet RSS %.1f MiB (%s); relist %.1f ms (p50 %.1f)",
		n.cfg.scale, r.scaleRest.cpu, r.scaleRest.svcCPU, r.scaleRest.mem.rss, r.scaleRest.mem, r.scaleRelist.mean, r.scaleRelist.p50)
	progress("runlet: deleting the %d pods", n.cfg.scale)
	n.gone(pods)
}
