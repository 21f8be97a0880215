package bench

import (
	"fmt"
	"math"
	"strings"
)

// checks prints one PASS/MISS line per target of issue 12 and the design;
// N/A when a figure was not measured.
func checks(b *strings.Builder, cfg config, r *results) {
	check := func(name string, value, limit float64, detail string) {
		verdict := "MISS"
		if value <= limit {
			verdict = "PASS"
		} else if math.IsNaN(value) || math.IsNaN(limit) {
			verdict = "N/A "
		}
		fmt.Fprintf(b, "%s  %s: %s\n", verdict, name, detail)
	}
	s50, s99, rs50, rs99 := pct(r.start, .5), pct(r.start, .99), pct(r.rawStart, .5), pct(r.rawStart, .99)
	check("pod start p50", s50, rs50+50, fmt.Sprintf("runlet %.1f ms ≤ raw %.1f ms + 50 ms", s50, rs50))
	check("pod start p99", s99, 1.5*rs99, fmt.Sprintf("runlet %.1f ms ≤ 1.5 × raw %.1f ms", s99, rs99))
	c50 := pct(r.rawCNIStart, .5)
	check("the CNI network's cost on pod start p50", c50, rs50+30, fmt.Sprintf("raw on runlet's CNI network %.1f ms ≤ raw on podman's bridge %.1f ms + 30 ms", c50, rs50))
	// The design's figure; issue 12's table quoted 500 ms.
	check("exit → API status p99", pct(r.exit, .99), 50, fmt.Sprintf("%.1f ms ≤ 50 ms", pct(r.exit, .99)))
	for _, size := range cfg.bursts {
		rl, raw := orNaN(r.burst, size), orNaN(r.rawBurst, size)
		check(fmt.Sprintf("burst of %d", size), 0.8, rl/raw, fmt.Sprintf("runlet %.2f pods/s ≥ 0.8 × raw %.2f pods/s (%.2f ×)", rl, raw, rl/raw))
	}
	d50, d99, rd99 := pct(r.del, .5), pct(r.del, .99), pct(r.rawDelete, .99)
	check("delete p50", d50, 1000, fmt.Sprintf("%.1f ms ≤ 1000 ms", d50))
	check("delete p99", d99, 2*rd99, fmt.Sprintf("runlet %.1f ms ≤ 2 × raw %.1f ms", d99, rd99))
	check("delete (default grace) p50", pct(r.graceDel, .5), 1000, fmt.Sprintf("%.1f ms ≤ 1000 ms", pct(r.graceDel, .5)))
	check("in-place resize p50", pct(r.resize, .5), 200, fmt.Sprintf("%.1f ms ≤ 200 ms", pct(r.resize, .5)))
	check("RSS, 0 pods", r.mem0.rss, 40, fmt.Sprintf("%.1f MiB ≤ 40 MiB (the framework alone, vkfloor: %.1f MiB)", r.mem0.rss, r.floor.rss))
	grow := r.memSecrets.rss - r.mem0.rss
	check(fmt.Sprintf("RSS with %d unrelated Secrets", cfg.secrets), grow, 5, fmt.Sprintf("%+.1f MiB ≤ 5 MiB", grow))
	b0 := cfg.bursts[0]
	check(fmt.Sprintf("RSS, %d pods", b0), r.rest.mem.rss, 80, fmt.Sprintf("%.1f MiB ≤ 80 MiB", r.rest.mem.rss))
	check("CPU at rest", r.rest.cpu, 1, fmt.Sprintf("%.2f %% ≤ 1 %% of one core, %d pods", r.rest.cpu, b0))
	check("podman CPU at rest", r.rest.svcCPU, 3, fmt.Sprintf("%.2f %% ≤ 3 %% of one core, %d pods", r.rest.svcCPU, b0))
	check("CPU with probes", r.probeCPU, 5, fmt.Sprintf("%.2f %% ≤ 5 %% of one core, %d pods probed every second", r.probeCPU, b0))
	if cfg.runc {
		runcChecks(check, cfg, r)
	}
	if cfg.reboot > 0 {
		check("restarts on reconnect after a reboot", r.reconnectRestarts, 0,
			fmt.Sprintf("%.0f containers restarted by the reconnect (target 0); %d pods Running %v after runlet's start with the apiserver down",
				r.reconnectRestarts, cfg.reboot, r.rebootRunning.Round(100e6)))
	}
	if cfg.scale == 0 {
		return
	}
	ready := math.NaN()
	if r.scaleReady >= 0 {
		ready = 0
	}
	check(fmt.Sprintf("scale: %d pods Running and Ready", cfg.scale), ready, 0, fmt.Sprintf("after %v", r.scaleReady.Round(100e6)))
	check(fmt.Sprintf("CPU at rest, %d pods", cfg.scale), r.scaleRest.cpu, 2, fmt.Sprintf("%.2f %% ≤ 2 %% of one core", r.scaleRest.cpu))
	// Linear: the cost per pod at the larger count is no more than a quarter
	// above the one at the smaller (a fixed part makes it fall, not rise).
	per := func(x relist) float64 { return x.mean / float64(x.pods) }
	check("relist cost linear in pods", per(r.scaleRelist), 1.25*per(r.relist),
		fmt.Sprintf("%.1f ms at %d pods, %.1f ms at %d: %.3f ≤ 1.25 × %.3f ms per pod",
			r.relist.mean, r.relist.pods, r.scaleRelist.mean, r.scaleRelist.pods, per(r.scaleRelist), per(r.relist)))
}

// runcChecks are issue 19's targets for the runc backend.
func runcChecks(check func(name string, value, limit float64, detail string), cfg config, r *results) {
	s50, raw50 := pct(r.runcStart, .5), pct(r.runcRawStart, .5)
	check("runc: pod start p50", s50, 120, fmt.Sprintf("runlet on runc %.1f ms ≤ 120 ms (raw runc + CNI %.1f ms)", s50, raw50))
	b0 := cfg.bursts[0]
	podman := orNaN(r.burst, b0)
	check(fmt.Sprintf("runc: burst of %d", b0), 2, r.runcBurst/podman,
		fmt.Sprintf("runlet on runc %.2f pods/s ≥ 2 × runlet on podman %.2f pods/s (%.2f ×)", r.runcBurst, podman, r.runcBurst/podman))
	check(fmt.Sprintf("runc: RSS, %d pods", b0), r.runcMem.rss, r.rest.mem.rss+10,
		fmt.Sprintf("%.1f MiB ≤ runlet on podman's %.1f MiB + 10 MiB", r.runcMem.rss, r.rest.mem.rss))
}
