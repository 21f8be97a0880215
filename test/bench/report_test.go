package bench

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// row is one line of the table.
type row struct {
	name, unit   string
	runlet, raw  float64
	target, note string
}

func rows(cfg config, r *results) []row {
	nan := math.NaN()
	b0 := cfg.bursts[0]
	out := []row{
		{"pod start p50", "ms", pct(r.start, .5), pct(r.rawStart, .5), "≤ raw + 50 ms", fmt.Sprintf("n=%d", len(r.start))},
		{"pod start p99", "ms", pct(r.start, .99), pct(r.rawStart, .99), "≤ 1.5 × raw", ""},
		{"  of which scheduling p50", "ms", pct(r.bound, .5), nan, "", "create → bound (watch)"},
		{"raw pod start on the CNI network p50", "ms", pct(r.rawCNIStart, .5), pct(r.rawStart, .5), "≤ raw + 30 ms",
			fmt.Sprintf("n=%d; netns + CNI ADD (kubenet) + the container joining it, against podman's bridge", len(r.rawCNIStart))},
		{"exit → API status p50", "ms", pct(r.exit, .5), pct(r.rawExit, .5), "", fmt.Sprintf("n=%d; from podman's FinishedAt; raw: → inspect exited", len(r.exit))},
		{"exit → API status p99", "ms", pct(r.exit, .99), pct(r.rawExit, .99), "≤ 50 ms", ""},
		{"  kill call → API status p99", "ms", pct(r.kill, .99), pct(r.rawKill, .99), "", "podman's kill waits for the exit"},
	}
	for _, size := range cfg.bursts {
		out = append(out, row{fmt.Sprintf("burst of %d pods", size), "pods/s", orNaN(r.burst, size), orNaN(r.rawBurst, size),
			"ratio ≥ 0.8", fmt.Sprintf("%d clients each", cfg.clients)})
	}
	out = append(out,
		row{"delete (grace 0) p50", "ms", pct(r.del, .5), pct(r.rawDelete, .5), "≤ 1000 ms", fmt.Sprintf("n=%d; raw: pod rm -f", len(r.del))},
		row{"delete (grace 0) p99", "ms", pct(r.del, .99), pct(r.rawDelete, .99), "≤ 2 × raw", ""},
		row{"delete (grace 30 s) p50", "ms", pct(r.graceDel, .5), nan, "≤ 1000 ms", fmt.Sprintf("n=%d; exits on SIGTERM → object gone", len(r.graceDel))},
		row{"delete (grace 30 s) p99", "ms", pct(r.graceDel, .99), nan, "", ""},
		row{"in-place resize p50", "ms", pct(r.resize, .5), nan, "≤ 200 ms", fmt.Sprintf("n=%d; resize call → the new memory limit in the status", len(r.resize))},
		row{"in-place resize p99", "ms", pct(r.resize, .99), nan, "", ""},
		row{"runlet RSS, 0 pods", "MiB", r.mem0.rss, nan, "≤ 40 MiB", r.mem0.String()},
		row{"  framework floor, 0 pods", "MiB", r.floor.rss, nan, "", "vkfloor, a provider that does nothing: " + r.floor.String()},
		row{fmt.Sprintf("  + %d unrelated Secrets", cfg.secrets), "MiB", r.memSecrets.rss - r.mem0.rss, nan, "≤ 5 MiB more",
			fmt.Sprintf("RSS %.1f MiB: %s", r.memSecrets.rss, r.memSecrets)},
		row{fmt.Sprintf("runlet RSS, %d pods", b0), "MiB", r.rest.mem.rss, nan, "≤ 80 MiB", r.rest.mem.String()},
		row{fmt.Sprintf("runlet CPU at rest, %d pods", b0), "% core", r.rest.cpu, nan, "≤ 1 %", fmt.Sprintf("over %v", cfg.cpuWindow)},
		row{fmt.Sprintf("podman CPU at rest, %d pods", b0), "% core", r.rest.svcCPU, nan, "≤ 3 %", fmt.Sprintf("podman service; its RSS %.1f MiB", r.rest.svcMem.rss)},
		row{fmt.Sprintf("relist, %d pods", b0), "ms", r.relist.mean, nan, "", fmt.Sprintf("p50 %.1f ms; %.3f ms/pod; one pod's refresh %.1f ms", r.relist.p50, r.relist.mean/float64(r.relist.pods), r.relist.pod)},
	)
	if cfg.scale > 0 {
		sr := r.scaleReady.Seconds()
		if r.scaleReady < 0 {
			sr = nan
		}
		out = append(out,
			row{fmt.Sprintf("scale: %d pods Ready", cfg.scale), "s", sr, nan, "all Ready", fmt.Sprintf("created by %d clients → last Ready", cfg.clients)},
			row{fmt.Sprintf("runlet CPU at rest, %d pods", cfg.scale), "% core", r.scaleRest.cpu, nan, "≤ 2 %", fmt.Sprintf("over %v", cfg.cpuWindow)},
			row{fmt.Sprintf("podman CPU at rest, %d pods", cfg.scale), "% core", r.scaleRest.svcCPU, nan, "", fmt.Sprintf("podman service; its RSS %.1f MiB", r.scaleRest.svcMem.rss)},
			row{fmt.Sprintf("runlet RSS, %d pods", cfg.scale), "MiB", r.scaleRest.mem.rss, nan, "", r.scaleRest.mem.String()},
			row{fmt.Sprintf("relist, %d pods", cfg.scale), "ms", r.scaleRelist.mean, nan, "linear", fmt.Sprintf("p50 %.1f ms; %.3f ms/pod; one pod's refresh %.1f ms", r.scaleRelist.p50, r.scaleRelist.mean/float64(r.scaleRelist.pods), r.scaleRelist.pod)},
		)
	}
	out = append(out,
		row{"join → node Ready p50", "ms", pct(r.join, .5), pct(r.bootstrapReady, .5), "",
			fmt.Sprintf("n=%d; runlet join's exec → Ready (watch); raw column: runlet with the bootstrap kubeconfig, no discovery", len(r.join))},
		row{"join → node Ready max", "ms", pct(r.join, 1), pct(r.bootstrapReady, 1), "", ""},
		row{"  of which registered p50", "ms", pct(r.joinRegistered, .5), nan, "", "discovery, TLS bootstrap (CSR approved and signed), Node create"},
	)
	out = append(out,
		row{"runc: pod start p50", "ms", pct(r.runcStart, .5), pct(r.runcRawStart, .5), "≤ 120 ms",
			fmt.Sprintf("n=%d; runlet --runtime=runc; raw: runc + CNI driven in process", len(r.runcStart))},
		row{"runc: pod start p99", "ms", pct(r.runcStart, .99), pct(r.runcRawStart, .99), "", ""},
		row{fmt.Sprintf("runc: burst of %d pods", b0), "pods/s", r.runcBurst, orNaN(r.burst, b0), "≥ 2 × podman's",
			fmt.Sprintf("raw column: runlet on podman; %d clients", cfg.clients)},
		row{fmt.Sprintf("runc: runlet RSS, %d pods", b0), "MiB", r.runcMem.rss, r.rest.mem.rss, "≤ podman's + 10 MiB",
			"raw column: runlet on podman; " + r.runcMem.String()},
	)
	out = append(out,
		row{fmt.Sprintf("reboot: %d pods Running", cfg.reboot), "s", seconds(r.rebootRunning), nan, "measured",
			fmt.Sprintf("apiserver down: runlet's exec → every checkpointed pod Running (kubelet port), of which the --offline-start-after wait %v", rebootOfflineWait)},
		row{"  then statuses in the API", "s", seconds(r.reconnectStatus), nan, "seconds", "apiserver resumed → every pod's post-reboot container in the API"},
		row{"  restarts on reconnect", "containers", r.reconnectRestarts, nan, "0", fmt.Sprintf("containers not the ones run offline, %v after", cfg.settle)},
	)
	return append(out,
		row{fmt.Sprintf("runlet CPU, %d pods probed", b0), "% core", r.probeCPU, nan, "≤ 5 %",
			fmt.Sprintf("httpGet readiness every 1 s; podman service: %.1f %%; +%.0f goroutines", r.probeSvcCPU, r.probeGoroutines)},
		row{"runlet's own relists", "ms", r.relistRunlet, nan, "", fmt.Sprintf("mean of %.0f over the run (runlet_pleg_relist_duration_seconds)", r.relistRunletN)},
	)
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
	if math.IsNaN(v) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

func report(cfg config, r *results, load0, load1 string) {
	var b strings.Builder
	fmt.Fprintf(&b, "\nrunlet bench, %s, %d cores, load average %s at start, %s at end\n\n", time.Now().Format(time.RFC3339), runtime.NumCPU(), load0, load1)
	line := "%-30s %-7s %9s %9s %10s   %-14s %s\n"
	fmt.Fprintf(&b, line, "figure", "unit", "runlet", "raw", "runlet/raw", "target", "note")
	for _, x := range rows(cfg, r) {
		ratio := "-"
		if q := x.runlet / x.raw; !math.IsNaN(q) {
			ratio = strconv.FormatFloat(q, 'f', 2, 64)
		}
		fmt.Fprintf(&b, line, x.name, x.unit, num(x.runlet), num(x.raw), ratio, x.target, x.note)
	}
	b.WriteString("\n")
	checks(&b, cfg, r)
	for _, n := range r.notes {
		b.WriteString("\n" + strings.Trim(n, "\n") + "\n")
	}
	fmt.Print(b.String())
}
