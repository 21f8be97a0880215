package bench

import (
	"fmt"
	"math"
	"strings"
)

// checker prints one PASS/MISS line per target; N/A when a figure was not measured.
type checker struct{ b *strings.Builder }

// le checks value ≤ limit.
func (c checker) le(name string, value, limit float64, detail string) {
	verdict := "MISS"
	if value <= limit {
		verdict = "PASS"
	} else if math.IsNaN(value) || math.IsNaN(limit) {
		verdict = "N/A "
	}
	fmt.Fprintf(c.b, "%s  %s: %s\n", verdict, name, detail)
}

// checks prints the targets of the design: each of runlet's figures against the kubelet's in the same
// run, and against the raw backend's.
func checks(b *strings.Builder, cfg config, r *results) {
	c := checker{b}
	for _, k := range []string{kindPodman, kindRunc} {
		if k == kindRunc && !cfg.runc {
			continue
		}
		kubeletChecks(c, cfg, k, r.stacks[k], r.stacks[kindKubelet])
	}
	rawChecks(c, cfg, r)
	if cfg.reboot > 0 {
		c.le("restarts on reconnect after a reboot", r.reconnectRestarts, 0,
			fmt.Sprintf("%.0f containers restarted by the reconnect (target 0); %d pods Running %v after runlet's start with the apiserver down",
				r.reconnectRestarts, cfg.reboot, r.rebootRunning.Round(100e6)))
	}
	b0 := cfg.bursts[0]
	c.le("exit → API status p99", pct(r.exit, .99), 50, fmt.Sprintf("%.1f ms ≤ 50 ms", pct(r.exit, .99)))
	c.le("in-place resize p50", pct(r.resize, .5), 200, fmt.Sprintf("%.1f ms ≤ 200 ms", pct(r.resize, .5)))
	grow := r.memSecrets.rss - r.mem0.rss
	c.le(fmt.Sprintf("RSS with %d unrelated Secrets", cfg.secrets), grow, 5, fmt.Sprintf("%+.1f MiB ≤ 5 MiB", grow))
	if cfg.runc {
		pm, rc := r.stacks[kindPodman], r.stacks[kindRunc]
		c.le(fmt.Sprintf("runc: burst of %d", b0), 2, rc.burst/pm.burst,
			fmt.Sprintf("runlet on runc %.2f pods/s ≥ 2 × runlet on podman %.2f pods/s (%.2f ×)", rc.burst, pm.burst, rc.burst/pm.burst))
	}
	scaleChecks(c, cfg, r)
}

// kubeletChecks are runlet on a backend (kind) against the kubelet on containerd.
func kubeletChecks(c checker, cfg config, kind string, s, kl *stackResults) {
	name := func(what string) string { return kind + ": " + what }
	lower := func(what, unit string, v, k float64) {
		c.le(name(what), v, k, fmt.Sprintf("runlet %.1f %s ≤ the kubelet's %.1f %s (%.2f ×)", v, unit, k, unit, v/k))
	}
	lower("pod start p50", "ms", pct(s.start, .5), pct(kl.start, .5))
	lower("pod start p99", "ms", pct(s.start, .99), pct(kl.start, .99))
	c.le(name(fmt.Sprintf("burst of %d", cfg.bursts[0])), kl.burst, s.burst,
		fmt.Sprintf("runlet %.2f pods/s ≥ the kubelet's %.2f pods/s (%.2f ×)", s.burst, kl.burst, s.burst/kl.burst))
	lower("delete (grace 0) p99", "ms", pct(s.del, .99), pct(kl.del, .99))
	lower("delete (default grace) p99", "ms", pct(s.graceDel, .99), pct(kl.graceDel, .99))
	lower("own RSS, 0 pods", "MiB", s.mem0.agent.rss, kl.mem0.agent.rss)
	lower(fmt.Sprintf("own RSS, %d pods", cfg.bursts[0]), "MiB", s.memN.agent.rss, kl.memN.agent.rss)
	v, k := s.memN.perPod(s.mem0).pss, kl.memN.perPod(kl.mem0).pss
	c.le(name("the stack's memory per pod (PSS)"), v, 0.5*k,
		fmt.Sprintf("runlet's stack %.2f MiB ≤ 0.5 × the kubelet's %.2f MiB (%.2f ×)", v, k, v/k))
	lower("CPU at rest (host)", "%", s.rest.host, kl.rest.host)
	lower("CPU with httpGet probes (host)", "%", s.probeHTTP.host, kl.probeHTTP.host)
	lower("CPU with exec probes (host)", "%", s.exec.host, kl.exec.host)
}

// rawChecks are runlet against its raw backend, the physical limit.
func rawChecks(c checker, cfg config, r *results) {
	pm := r.stacks[kindPodman]
	s50, s99, rs50, rs99 := pct(pm.start, .5), pct(pm.start, .99), pct(r.rawStart, .5), pct(r.rawStart, .99)
	c.le("podman: pod start p50 against raw", s50, rs50+50, fmt.Sprintf("runlet %.1f ms ≤ raw %.1f ms + 50 ms", s50, rs50))
	c.le("podman: pod start p99 against raw", s99, 1.5*rs99, fmt.Sprintf("runlet %.1f ms ≤ 1.5 × raw %.1f ms", s99, rs99))
	if cfg.runc {
		rc := r.stacks[kindRunc]
		s50, rs50 := pct(rc.start, .5), pct(r.runcRawStart, .5)
		c.le("runc: pod start p50 against raw", s50, rs50+50, fmt.Sprintf("runlet %.1f ms ≤ raw runc + CNI %.1f ms + 50 ms", s50, rs50))
	}
	c50 := pct(r.rawCNIStart, .5)
	c.le("the CNI network's cost on pod start p50", c50, rs50+30,
		fmt.Sprintf("raw on runlet's CNI network %.1f ms ≤ raw on podman's bridge %.1f ms + 30 ms", c50, pct(r.rawStart, .5)))
	for _, size := range cfg.bursts {
		rl, raw := orNaN(r.burst, size), orNaN(r.rawBurst, size)
		c.le(fmt.Sprintf("podman: burst of %d against raw", size), 0.8, rl/raw, fmt.Sprintf("runlet %.2f pods/s ≥ 0.8 × raw %.2f pods/s (%.2f ×)", rl, raw, rl/raw))
	}
	d99, rd99 := pct(pm.del, .99), pct(r.rawDelete, .99)
	c.le("podman: delete p99 against raw", d99, 2*rd99, fmt.Sprintf("runlet %.1f ms ≤ 2 × raw %.1f ms", d99, rd99))
}

func scaleChecks(c checker, cfg config, r *results) {
	if cfg.scale == 0 {
		return
	}
	ready := math.NaN()
	if r.scaleReady >= 0 {
		ready = 0
	}
	c.le(fmt.Sprintf("scale: %d pods Running and Ready", cfg.scale), ready, 0, fmt.Sprintf("after %v", r.scaleReady.Round(100e6)))
	c.le(fmt.Sprintf("CPU at rest, %d pods", cfg.scale), r.scaleRest.cpu, 2, fmt.Sprintf("%.2f %% ≤ 2 %% of one core", r.scaleRest.cpu))
	// Linear: the cost per pod at the larger count is no more than a quarter
	// above the one at the smaller (a fixed part makes it fall, not rise).
	per := func(x relist) float64 { return x.mean / float64(x.pods) }
	c.le("relist cost linear in pods", per(r.scaleRelist), 1.25*per(r.relist),
		fmt.Sprintf("%.1f ms at %d pods, %.1f ms at %d: %.3f ≤ 1.25 × %.3f ms per pod",
			r.relist.mean, r.relist.pods, r.scaleRelist.mean, r.scaleRelist.pods, per(r.scaleRelist), per(r.relist)))
}
