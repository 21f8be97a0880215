package bench

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// The table's value columns.
const (
	colPodman  = iota // runlet on podman
	colRunc           // runlet on runc
	colKubelet        // the kubelet on containerd + runc
	colRaw            // raw podman
	colRawRunc        // raw runc + CNI
	columns
)

// row is one line of the table.
type row struct {
	name, unit   string
	v            [columns]float64
	target, note string
}

// only is a row's values with one column set.
func only(col int, v float64) [columns]float64 {
	out := [columns]float64{}
	for i := range out {
		out[i] = math.NaN()
	}
	out[col] = v
	return out
}

// each is a row's values from every node's results, with the raw columns given.
func each(r *results, f func(s *stackResults) float64, raw, rawRunc float64) [columns]float64 {
	return [columns]float64{f(r.stacks[kindPodman]), f(r.stacks[kindRunc]), f(r.stacks[kindKubelet]), raw, rawRunc}
}

func rows(cfg config, r *results) []row {
	b0 := cfg.bursts[0]
	pm := r.stacks[kindPodman]
	out := startRows(cfg, r)
	out = append(out, row{fmt.Sprintf("burst of %d pods", b0), "pods/s", each(r, func(s *stackResults) float64 { return s.burst }, orNaN(r.rawBurst, b0), nan()),
		"≥ kubelet; ≥ 0.8 × raw", fmt.Sprintf("%d clients each; runc ≥ 2 × podman", cfg.clients)})
	for _, size := range cfg.bursts[1:] {
		v := only(colPodman, orNaN(r.burst, size))
		v[colRaw] = orNaN(r.rawBurst, size)
		out = append(out, row{fmt.Sprintf("burst of %d pods", size), "pods/s", v, "≥ 0.8 × raw", fmt.Sprintf("%d clients each", cfg.clients)})
	}
	out = append(out,
		row{"delete (grace 0) p50", "ms", each(r, func(s *stackResults) float64 { return pct(s.del, .5) }, pct(r.rawDelete, .5), nan()), "",
			fmt.Sprintf("n=%d; → object gone and the sandbox removed; raw: pod rm -f", len(pm.del))},
		row{"delete (grace 0) p99", "ms", each(r, func(s *stackResults) float64 { return pct(s.del, .99) }, pct(r.rawDelete, .99), nan()), "≤ kubelet; ≤ 2 × raw", ""},
		row{"delete (grace 30 s) p50", "ms", each(r, func(s *stackResults) float64 { return pct(s.graceDel, .5) }, nan(), nan()), "",
			fmt.Sprintf("n=%d; exits on SIGTERM → object gone", len(pm.graceDel))},
		row{"delete (grace 30 s) p99", "ms", each(r, func(s *stackResults) float64 { return pct(s.graceDel, .99) }, nan(), nan()), "≤ kubelet", ""},
		row{"in-place resize p50", "ms", only(colPodman, pct(r.resize, .5)), "≤ 200 ms", fmt.Sprintf("n=%d; resize call → the new memory limit in the status", len(r.resize))},
		row{"in-place resize p99", "ms", only(colPodman, pct(r.resize, .99)), "", ""},
	)
	out = append(out, memRows(cfg, r)...)
	out = append(out, cpuRows(cfg, r)...)
	out = append(out, row{fmt.Sprintf("relist, %d pods", b0), "ms", only(colPodman, r.relist.mean), "",
		fmt.Sprintf("p50 %.1f ms; %.3f ms/pod; one pod's refresh %.1f ms", r.relist.p50, r.relist.mean/float64(r.relist.pods), r.relist.pod)})
	out = append(out, scaleRows(cfg, r)...)
	out = append(out, rebootRows(cfg, r)...)
	join := only(colPodman, pct(r.join, .5))
	join[colRaw] = pct(r.bootstrapReady, .5)
	joinMax := only(colPodman, pct(r.join, 1))
	joinMax[colRaw] = pct(r.bootstrapReady, 1)
	return append(out,
		row{"join → node Ready p50", "ms", join, "",
			fmt.Sprintf("n=%d; runlet join's exec → Ready (watch); raw podman column: runlet with the bootstrap kubeconfig, no discovery", len(r.join))},
		row{"join → node Ready max", "ms", joinMax, "", ""},
		row{"  of which registered p50", "ms", only(colPodman, pct(r.joinRegistered, .5)), "", "discovery, TLS bootstrap (CSR approved and signed), Node create"},
		row{"runlet's own relists", "ms", only(colPodman, r.relistRunlet), "", fmt.Sprintf("mean of %.0f over the run (runlet_pleg_relist_duration_seconds)", r.relistRunletN)},
	)
}

func startRows(cfg config, r *results) []row {
	pm := r.stacks[kindPodman]
	cni := only(colRaw, pct(r.rawCNIStart, .5))
	exit50, exit99, kill99 := only(colPodman, pct(r.exit, .5)), only(colPodman, pct(r.exit, .99)), only(colPodman, pct(r.kill, .99))
	exit50[colRaw], exit99[colRaw], kill99[colRaw] = pct(r.rawExit, .5), pct(r.rawExit, .99), pct(r.rawKill, .99)
	return []row{
		{"pod start p50", "ms", each(r, func(s *stackResults) float64 { return pct(s.start, .5) }, pct(r.rawStart, .5), pct(r.runcRawStart, .5)),
			"≤ kubelet; ≤ raw + 50 ms", fmt.Sprintf("n=%d each, in turns; create → Running (watch); raw: → running", len(pm.start))},
		{"pod start p99", "ms", each(r, func(s *stackResults) float64 { return pct(s.start, .99) }, pct(r.rawStart, .99), pct(r.runcRawStart, .99)),
			"≤ kubelet; ≤ 1.5 × raw", ""},
		{"  of which scheduling p50", "ms", only(colPodman, pct(r.bound, .5)), "", "create → bound (watch)"},
		{"raw pod start on the CNI network p50", "ms", cni, "≤ bridge + 30 ms",
			fmt.Sprintf("n=%d; netns + CNI ADD (kubenet) + the container joining it; on podman's bridge %.1f ms", len(r.rawCNIStart), pct(r.rawStart, .5))},
		{"exit → API status p50", "ms", exit50, "", fmt.Sprintf("n=%d; from podman's FinishedAt; raw: → inspect exited", len(r.exit))},
		{"exit → API status p99", "ms", exit99, "≤ 50 ms", ""},
		{"  kill call → API status p99", "ms", kill99, "", "podman's kill waits for the exit"},
	}
}

func memRows(cfg config, r *results) []row {
	b0 := cfg.bursts[0]
	m := func(f func(s *stackResults) float64) [columns]float64 { return each(r, f, nan(), nan()) }
	procs := func(f func(s *stackResults) stackMem) string {
		return fmt.Sprintf("processes: %d / %d / %d", f(r.stacks[kindPodman]).procs, f(r.stacks[kindRunc]).procs, f(r.stacks[kindKubelet]).procs)
	}
	return []row{
		{"agent RSS, 0 pods", "MiB", m(func(s *stackResults) float64 { return s.mem0.agent.rss }), "≤ kubelet",
			"runlet on podman: " + r.mem0.String() + fmt.Sprintf("; vkfloor (the framework alone) %.1f MiB", r.floor.rss)},
		{"agent PSS, 0 pods", "MiB", m(func(s *stackResults) float64 { return s.mem0.agent.pss }), "", ""},
		{fmt.Sprintf("  + %d unrelated Secrets", cfg.secrets), "MiB", only(colPodman, r.memSecrets.rss-r.mem0.rss), "≤ 5 MiB more",
			fmt.Sprintf("RSS %.1f MiB: %s", r.memSecrets.rss, r.memSecrets)},
		{fmt.Sprintf("agent RSS, %d pods", b0), "MiB", m(func(s *stackResults) float64 { return s.memN.agent.rss }), "≤ kubelet",
			"runlet on podman: " + r.memN.String()},
		{fmt.Sprintf("agent PSS, %d pods", b0), "MiB", m(func(s *stackResults) float64 { return s.memN.agent.pss }), "", ""},
		{"stack RSS, 0 pods", "MiB", m(func(s *stackResults) float64 { return s.mem0.stack.rss }), "",
			"agent + podman service / containerd; " + procs(func(s *stackResults) stackMem { return s.mem0 })},
		{"stack PSS, 0 pods", "MiB", m(func(s *stackResults) float64 { return s.mem0.stack.pss }), "", ""},
		{fmt.Sprintf("stack RSS, %d pods", b0), "MiB", m(func(s *stackResults) float64 { return s.memN.stack.rss }), "",
			"+ conmons / shims, infra / pause; " + procs(func(s *stackResults) stackMem { return s.memN })},
		{fmt.Sprintf("stack PSS, %d pods", b0), "MiB", m(func(s *stackResults) float64 { return s.memN.stack.pss }), "", ""},
		{"stack per pod, PSS", "MiB", m(func(s *stackResults) float64 { return s.memN.perPod(s.mem0).pss }), "≤ 0.5 × kubelet",
			fmt.Sprintf("(%d pods − 0 pods) / %d", b0, b0)},
		{"stack per pod, RSS", "MiB", m(func(s *stackResults) float64 { return s.memN.perPod(s.mem0).rss }), "", ""},
	}
}

func cpuRows(cfg config, r *results) []row {
	b0 := cfg.bursts[0]
	c := func(f func(s *stackResults) float64) [columns]float64 { return each(r, f, nan(), nan()) }
	var out []row
	for _, x := range []struct {
		what string
		get  func(s *stackResults) stackCPU
	}{
		{fmt.Sprintf("CPU at rest, %d pods", b0), func(s *stackResults) stackCPU { return s.rest }},
		{fmt.Sprintf("CPU, %d pods probed (httpGet)", b0), func(s *stackResults) stackCPU { return s.probeHTTP }},
		{fmt.Sprintf("CPU, %d pods probed (exec)", b0), func(s *stackResults) stackCPU { return s.exec }},
	} {
		out = append(out,
			row{x.what, "% core", c(func(s *stackResults) float64 { return x.get(s).host }), "≤ kubelet",
				fmt.Sprintf("the host's, over %v; with every node at 0 pods %.2f %%", cfg.cpuWindow, r.hostRest.host)},
			row{"  the stack's processes", "% core", c(func(s *stackResults) float64 { return x.get(s).stack }), "", "those alive at both ends, with the children they reaped"},
			row{"  the agent's own", "% core", c(func(s *stackResults) float64 { return x.get(s).agent }), "", ""},
		)
	}
	return out
}

func scaleRows(cfg config, r *results) []row {
	if cfg.scale == 0 {
		return nil
	}
	sr := r.scaleReady.Seconds()
	if r.scaleReady < 0 {
		sr = nan()
	}
	return []row{
		{fmt.Sprintf("scale: %d pods Ready", cfg.scale), "s", only(colPodman, sr), "all Ready", fmt.Sprintf("created by %d clients → last Ready", cfg.clients)},
		{fmt.Sprintf("runlet CPU at rest, %d pods", cfg.scale), "% core", only(colPodman, r.scaleRest.cpu), "≤ 2 %", fmt.Sprintf("over %v", cfg.cpuWindow)},
		{fmt.Sprintf("podman CPU at rest, %d pods", cfg.scale), "% core", only(colPodman, r.scaleRest.svcCPU), "", fmt.Sprintf("podman service; its RSS %.1f MiB", r.scaleRest.svcMem.rss)},
		{fmt.Sprintf("runlet RSS, %d pods", cfg.scale), "MiB", only(colPodman, r.scaleRest.mem.rss), "", r.scaleRest.mem.String()},
		{fmt.Sprintf("relist, %d pods", cfg.scale), "ms", only(colPodman, r.scaleRelist.mean), "linear", fmt.Sprintf("p50 %.1f ms; %.3f ms/pod; one pod's refresh %.1f ms", r.scaleRelist.p50, r.scaleRelist.mean/float64(r.scaleRelist.pods), r.scaleRelist.pod)},
	}
}

// rebootRows are a reboot's figures: runlet on podman only.
func rebootRows(cfg config, r *results) []row {
	if cfg.reboot == 0 {
		return nil
	}
	return []row{
		{fmt.Sprintf("reboot: %d pods Running", cfg.reboot), "s", only(colPodman, seconds(r.rebootRunning)), "measured",
			fmt.Sprintf("apiserver down: runlet's exec → every checkpointed pod Running (kubelet port), of which the --offline-start-after wait %v", rebootOfflineWait)},
		{"  then statuses in the API", "s", only(colPodman, seconds(r.reconnectStatus)), "seconds", "apiserver resumed → every pod's post-reboot container in the API"},
		{"  restarts on reconnect", "containers", only(colPodman, r.reconnectRestarts), "0", fmt.Sprintf("containers not the ones run offline, %v after", cfg.settle)},
	}
}

// seconds is d in seconds; a negative d (not measured) is NaN.
func seconds(d time.Duration) float64 {
	if d < 0 {
		return math.NaN()
	}
	return d.Seconds()
}

func orNaN(m map[int]float64, k int) float64 {
	if v, ok := m[k]; ok {
		return v
	}
	return math.NaN()
}

func num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func ratio(a, b float64) string {
	if q := a / b; !math.IsNaN(q) && !math.IsInf(q, 0) {
		return strconv.FormatFloat(q, 'f', 2, 64)
	}
	return "-"
}

func report(cfg config, r *results, load0, load1 string) {
	var b strings.Builder
	fmt.Fprintf(&b, "\nrunlet bench, %s, %d cores, load average %s at start, %s at end\n", time.Now().Format(time.RFC3339), runtime.NumCPU(), load0, load1)
	b.WriteString("podman: runlet on podman; runc: runlet on runc; kubelet: the kubelet v1.37.2 on containerd v2.4.2 + runc; raw: podman's API, runc + CNI driven in process\n\n")
	line := "%-38s %-7s %8s %8s %8s %8s %8s %6s %6s   %-24s %s\n"
	fmt.Fprintf(&b, line, "figure", "unit", "podman", "runc", "kubelet", "raw", "raw runc", "pm/kl", "rc/kl", "target", "note")
	for _, x := range rows(cfg, r) {
		fmt.Fprintf(&b, line, x.name, x.unit, num(x.v[colPodman]), num(x.v[colRunc]), num(x.v[colKubelet]), num(x.v[colRaw]), num(x.v[colRawRunc]),
			ratio(x.v[colPodman], x.v[colKubelet]), ratio(x.v[colRunc], x.v[colKubelet]), x.target, x.note)
	}
	b.WriteString("\n")
	checks(&b, cfg, r)
	for _, n := range r.notes {
		if n = strings.Trim(n, "\n"); n != "" {
			b.WriteString("\n" + n + "\n")
		}
	}
	fmt.Print(b.String())
}
