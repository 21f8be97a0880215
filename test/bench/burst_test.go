package bench

import (
	"fmt"
	"time"
)

// benchBurst creates size pods from cfg.clients clients at once and times
// them to Running. After the first burst the node is measured at rest (memory,
// CPU, relist cost) and its pods are the delete samples.
func benchBurst(n *node, size int, rest bool, r *results) {
	progress("runlet: burst of %d pods, %d clients", size, n.cfg.clients)
	t0, pods := n.createMany(fmt.Sprintf("b%d", size), size)
	last := n.waitAll("running", pods, 10*time.Minute)
	r.burst[size] = float64(size) / last.Sub(t0).Seconds()
	progress("runlet: burst of %d: %.2f pods/s", size, r.burst[size])
	if !rest {
		progress("runlet: deleting the %d pods of the burst", size)
		n.gone(pods)
		return
	}

	progress("runlet: %d pods at rest: settling %v, then CPU over %v", size, n.cfg.settle, n.cfg.cpuWindow)
	r.rest = atRest(n.t, n.cfg, n.rl.PID(), n.be.ServicePID(), n.rl.MetricsURL())
	r.relist = relistCost(n, size)
	r.notes = append(r.notes, heapTop(n, size))
	progress("runlet: %d pods at rest: runlet CPU %.2f %%, podman service %.2f %%; runlet RSS %.1f MiB (%s); relist %.1f ms (p50 %.1f)",
		size, r.rest.cpu, r.rest.svcCPU, r.rest.mem.rss, r.rest.mem, r.relist.mean, r.relist.p50)

	k := min(n.cfg.n, len(pods))
	progress("runlet: %d deletes (grace 0 → API object gone and podman pod removed)", k)
	for _, p := range pods[:k] {
		t0 := time.Now()
		deletePod(n.t, n.ctx, n.api, p.Name)
		clean := waitClean(n.t, n.ctx, n.c, p, time.Minute).Sub(t0)
		inAPI := n.wait("gone", p.Name, time.Minute).Sub(t0)
		r.del = append(r.del, max(clean, inAPI))
	}
	n.gone(pods[k:])
}
