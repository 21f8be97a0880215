package scale

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
)

// sloP99 is SIG-scalability's pod startup SLO: p99 of create → Running
// (stateless pods, images present) within 5 s.
const sloP99 = 5 * time.Second

// report prints the run's figures, runlet's ratios to kubemark's and a
// PASS or FAIL for each target. It asserts nothing.
func report(t *testing.T, cfg config, base baseline, results []*setResult, took time.Duration) {
	var b strings.Builder
	rl, km := find(results, setRunlet), find(results, setKubemark)
	fmt.Fprintf(&b, "\nscale: %d hollow nodes a set, %d pods a node, pods created at %.0f/s; the sets took turns; the run took %v\n",
		cfg.nodes, cfg.podsPerNode, cfg.createQPS, took.Round(time.Second))
	fmt.Fprintf(&b, "at rest: a window of %v, %v after the last pod ran; /metrics net of the control plane's own (%.1f requests/min, %.0f watches, no node)\n\n",
		cfg.rest, cfg.settle, sum(base.requests), sum(base.watches))
	summary(&b, rl, km)
	for _, r := range results {
		fmt.Fprintf(&b, "%s: %d pods on %d nodes (%d to %d a node); %d node identities made requests in the window\n",
			r.kind, len(r.latencies), r.nodes, r.podsLo, r.podsHi, r.auditIdentities)
	}
	b.WriteString("\nrequests per node per minute at rest, by verb and resource (all clients from /metrics, net of the control plane | by node identity):\n")
	table(&b, results, func(r *setResult) (map[string]float64, map[string]float64) { return r.metrics, r.audit }, func(v float64, r *setResult) float64 {
		return v / float64(r.nodes)
	})
	b.WriteString("\nopen watches per node at the window's end, by resource (all clients from /metrics, net of the control plane | by node identity):\n")
	table(&b, results, func(r *setResult) (map[string]float64, map[string]float64) { return r.metricW, r.auditW }, func(v float64, r *setResult) float64 {
		return v / float64(r.nodes)
	})
	t.Log(b.String())
}

// summary is the table of figures: runlet's, kubemark's, their ratio and
// the verdict on each target.
func summary(b *strings.Builder, rl, km *setResult) {
	w := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "figure\trunlet\tkubemark\trunlet/kubemark\ttarget\t")
	line := func(name string, f func(*setResult) float64, unit, target string, pass func(rl, km float64) bool) {
		a, k := value(rl, f), value(km, f)
		verdict := ""
		if pass != nil && !math.IsNaN(a) {
			verdict = "FAIL"
			if pass(a, k) {
				verdict = "PASS"
			}
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s %s\t\n", name, num(a, unit), num(k, unit), ratio(a, k), target, verdict)
	}
	notAbove := func(a, k float64) bool { return !math.IsNaN(k) && a <= k }
	// The targets are judged by node identity (the audit log); /metrics,
	// which names no client, is the cross-check: net of the control
	// plane's traffic with no node, it also carries the control plane's
	// own watch renewals that fell into the window.
	line("requests/node/min at rest, by node identity", func(r *setResult) float64 { return sum(r.audit) / float64(r.nodes) }, "", "≤ kubemark's", notAbove)
	line("  all clients (/metrics), net of the control plane", func(r *setResult) float64 { return sum(r.metrics) / float64(r.nodes) }, "", "", nil)
	line("open watches/node, by node identity", func(r *setResult) float64 { return sum(r.auditW) / float64(r.nodes) }, "", "≤ kubemark's", notAbove)
	line("  all clients (/metrics), net of the control plane", func(r *setResult) float64 { return sum(r.metricW) / float64(r.nodes) }, "", "", nil)
	line("pod start p50", func(r *setResult) float64 { return ms(percentile(r.latencies, .5)) }, "ms", "", nil)
	line("pod start p99", func(r *setResult) float64 { return ms(percentile(r.latencies, .99)) }, "ms", "≤ 5000 ms",
		func(a, _ float64) bool { return a <= ms(sloP99) })
	line("pod start max", func(r *setResult) float64 { return ms(percentile(r.latencies, 1)) }, "ms", "", nil)
	line("memory/node RSS, median", func(r *setResult) float64 { return r.mem.rssMedian }, "MiB", "", nil)
	line("memory/node RSS, largest", func(r *setResult) float64 { return r.mem.rssMax }, "MiB", "", nil)
	line("memory/node PSS, median", func(r *setResult) float64 { return r.mem.pssMedian }, "MiB", "", nil)
	line("CPU/node at rest, median", func(r *setResult) float64 { return r.cpu }, "% core", "", nil)
	line("first node started → all Ready", func(r *setResult) float64 { return r.ready.Seconds() }, "s", "", nil)
	line("pods created → all Running", func(r *setResult) float64 { return r.created.Seconds() }, "s", "", nil)
	line("pods deleted → all gone", func(r *setResult) float64 { return r.deleted.Seconds() }, "s", "", nil)
	_ = w.Flush()
}

// table prints one line per key, two columns (metrics | audit) per set.
func table(b *strings.Builder, results []*setResult, cols func(*setResult) (map[string]float64, map[string]float64),
	scale func(float64, *setResult) float64) {
	keys := map[string]bool{}
	for _, r := range results {
		m, a := cols(r)
		for k := range m {
			keys[k] = true
		}
		for k := range a {
			keys[k] = true
		}
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	w := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "\t"
	for _, r := range results {
		head += r.kind + "\t|\t"
	}
	fmt.Fprintln(w, "verb resource"+"\t"+head)
	for _, k := range sorted {
		if !shown(results, cols, scale, k) {
			continue
		}
		fmt.Fprint(w, k+"\t")
		for _, r := range results {
			m, a := cols(r)
			fmt.Fprintf(w, "%.2f\t|\t%.2f\t", scale(m[k], r), scale(a[k], r))
		}
		fmt.Fprintln(w)
	}
	_ = w.Flush()
}

// shown says whether a key reaches 0.005 in any column: the control plane's
// watch renewals spread over the window leave many keys that do not.
func shown(results []*setResult, cols func(*setResult) (map[string]float64, map[string]float64),
	scale func(float64, *setResult) float64, k string) bool {
	for _, r := range results {
		m, a := cols(r)
		if scale(m[k], r) >= 0.005 || scale(a[k], r) >= 0.005 {
			return true
		}
	}
	return false
}

func find(results []*setResult, kind string) *setResult {
	for _, r := range results {
		if r.kind == kind {
			return r
		}
	}
	return nil
}

func value(r *setResult, f func(*setResult) float64) float64 {
	if r == nil {
		return math.NaN()
	}
	return f(r)
}

func num(v float64, unit string) string {
	if math.IsNaN(v) {
		return "-"
	}
	if unit == "" || unit == "% core" {
		return strings.TrimSpace(fmt.Sprintf("%.2f %s", v, unit))
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}

func ratio(a, k float64) string {
	if math.IsNaN(a) || math.IsNaN(k) || k == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/k)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
