package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime/podman"
	"github.com/runlet/runlet/test/e2e/framework"
)

// TestMain starts the control plane only for a real bench run.
func TestMain(m *testing.M) {
	if os.Getenv("RUNLET_BENCH") != "1" {
		os.Exit(m.Run())
	}
	framework.Main(m)
}

// config holds the sample counts; each can be changed through the environment.
type config struct {
	n          int           // RUNLET_BENCH_N: samples of sequential start, exit and delete
	burst      int           // RUNLET_BENCH_BURST: pods created at once
	rawClients int           // RUNLET_BENCH_RAW_CLIENTS: concurrent raw clients in the burst
	cpuWindow  time.Duration // RUNLET_BENCH_CPU_SECONDS: window of the CPU-at-rest figure
	settle     time.Duration // RUNLET_BENCH_SETTLE_SECONDS: quiet time before RSS/CPU readings
}

func loadConfig() config {
	return config{
		n:          envInt("RUNLET_BENCH_N", 20),
		burst:      envInt("RUNLET_BENCH_BURST", 100),
		rawClients: envInt("RUNLET_BENCH_RAW_CLIENTS", 4),
		cpuWindow:  time.Duration(envInt("RUNLET_BENCH_CPU_SECONDS", 30)) * time.Second,
		settle:     time.Duration(envInt("RUNLET_BENCH_SETTLE_SECONDS", 10)) * time.Second,
	}
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// results collects every figure; NaN (not measured) prints as "-".
type results struct {
	rawStart, rawExit, rawDelete []time.Duration
	rawKill                      []time.Duration // kill call → inspect exited
	rawBurst                     float64         // pods/s
	start, bound, exit, del      []time.Duration
	kill                         []time.Duration // kill call → API status
	graceDel                     []time.Duration // delete, default grace, exits on SIGTERM → API object gone
	burst                        float64         // pods/s
	rss0, rss100, cpu            float64         // MiB, MiB, % of one core
	svcRSS, svcCPU               float64         // the podman service's, with the burst pods (notes)
	probeCPU, probeSvcCPU        float64         // % of one core while cfg.burst pods are probed every second
	probeGoroutines              float64         // runlet's goroutines with those probes, beyond its idle count
	notes                        []string        // printed after the table
}

// TestBench measures the raw backend first, then runlet on the same podman service.
func TestBench(t *testing.T) {
	if os.Getenv("RUNLET_BENCH") != "1" {
		t.Skip("benchmarks run with RUNLET_BENCH=1 (make bench)")
	}
	cfg := loadConfig()
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	load0 := loadavg()
	nan := math.NaN()
	r := &results{rawBurst: nan, burst: nan, rss0: nan, rss100: nan, cpu: nan, svcRSS: nan, svcCPU: nan,
		probeCPU: nan, probeSvcCPU: nan, probeGoroutines: nan}
	defer func() { report(cfg, r, load0, loadavg()) }()

	framework.EnsureImages(t)
	progress("starting a private podman service (runc, clamped rlimits), shared by raw and runlet")
	be, err := podman.New(ctx, podman.Options{PrivateService: true, Owner: "bench-raw"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = be.Close() })
	run := runID()
	t.Cleanup(func() { removeRaw(context.Background(), be.Client(), run) })

	benchRaw(t, ctx, cfg, be, run, r)
	benchRunlet(t, ctx, cfg, be, r)
}

func runID() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[bench %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// pct is the nearest-rank percentile in milliseconds (NaN without samples).
func pct(d []time.Duration, p float64) float64 {
	if len(d) == 0 {
		return math.NaN()
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return float64(s[max(i, 0)]) / float64(time.Millisecond)
}

func report(cfg config, r *results, load0, load1 string) {
	rows := []struct {
		name, unit   string
		runlet, raw  float64
		target, note string
	}{
		{"pod start p50", "ms", pct(r.start, .5), pct(r.rawStart, .5), "≤ raw + 50 ms", fmt.Sprintf("n=%d", len(r.start))},
		{"pod start p99", "ms", pct(r.start, .99), pct(r.rawStart, .99), "≤ 2 × raw", ""},
		{"  of which scheduling p50", "ms", pct(r.bound, .5), math.NaN(), "", "create → bound (watch)"},
		{"exit → API status p50", "ms", pct(r.exit, .5), pct(r.rawExit, .5), "", fmt.Sprintf("n=%d; from podman's FinishedAt; raw: → inspect exited", len(r.exit))},
		{"exit → API status p99", "ms", pct(r.exit, .99), pct(r.rawExit, .99), "≤ 500 ms", ""},
		{"  kill call → API status p99", "ms", pct(r.kill, .99), pct(r.rawKill, .99), "", "podman's kill waits for the exit"},
		{fmt.Sprintf("burst of %d pods", cfg.burst), "pods/s", r.burst, r.rawBurst, "ratio ≥ 0.8", fmt.Sprintf("raw: %d clients", cfg.rawClients)},
		{"delete (grace 0) p50", "ms", pct(r.del, .5), pct(r.rawDelete, .5), "≤ 1000 ms", fmt.Sprintf("n=%d; raw: pod rm -f", len(r.del))},
		{"delete (grace 0) p99", "ms", pct(r.del, .99), pct(r.rawDelete, .99), "", ""},
		{"delete (grace 30 s) p50", "ms", pct(r.graceDel, .5), math.NaN(), "≤ 1000 ms", fmt.Sprintf("n=%d; exits on SIGTERM → object gone", len(r.graceDel))},
		{"delete (grace 30 s) p99", "ms", pct(r.graceDel, .99), math.NaN(), "", ""},
		{"runlet RSS, 0 pods", "MiB", r.rss0, math.NaN(), "≤ 40 MiB", ""},
		{fmt.Sprintf("runlet RSS, %d pods", cfg.burst), "MiB", r.rss100, math.NaN(), "≤ 80 MiB", fmt.Sprintf("podman service: %.1f MiB", r.svcRSS)},
		{fmt.Sprintf("runlet CPU at rest, %d pods", cfg.burst), "% core", r.cpu, math.NaN(), "≤ 1 %", fmt.Sprintf("over %v; podman service: %.1f %%", cfg.cpuWindow, r.svcCPU)},
		{fmt.Sprintf("runlet CPU, %d pods probed", cfg.burst), "% core", r.probeCPU, math.NaN(), "≤ 5 %",
			fmt.Sprintf("httpGet readiness every 1 s; podman service: %.1f %%; +%.0f goroutines", r.probeSvcCPU, r.probeGoroutines)},
	}
	num := func(v float64) string {
		if math.IsNaN(v) {
			return "-"
		}
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nrunlet bench, %s, %d cores, load average %s at start, %s at end\n\n", time.Now().Format(time.RFC3339), runtime.NumCPU(), load0, load1)
	line := "%-30s %-7s %9s %9s %10s   %-14s %s\n"
	fmt.Fprintf(&b, line, "figure", "unit", "runlet", "raw", "runlet/raw", "target", "note")
	for _, x := range rows {
		ratio := "-"
		if q := x.runlet / x.raw; !math.IsNaN(q) {
			ratio = strconv.FormatFloat(q, 'f', 2, 64)
		}
		fmt.Fprintf(&b, line, x.name, x.unit, num(x.runlet), num(x.raw), ratio, x.target, x.note)
	}
	b.WriteString("\n")
	check := func(name string, runlet, limit float64, detail string) {
		verdict := "MISS"
		if runlet <= limit {
			verdict = "PASS"
		} else if math.IsNaN(runlet) || math.IsNaN(limit) {
			verdict = "N/A "
		}
		fmt.Fprintf(&b, "%s  %s: %s\n", verdict, name, detail)
	}
	s50, s99, rs50, rs99 := pct(r.start, .5), pct(r.start, .99), pct(r.rawStart, .5), pct(r.rawStart, .99)
	check("pod start p50", s50, rs50+50, fmt.Sprintf("runlet %.1f ms ≤ raw %.1f ms + 50 ms", s50, rs50))
	check("pod start p99", s99, 2*rs99, fmt.Sprintf("runlet %.1f ms ≤ 2 × raw %.1f ms", s99, rs99))
	check("exit → API status p99", pct(r.exit, .99), 500, fmt.Sprintf("%.1f ms ≤ 500 ms", pct(r.exit, .99)))
	check("burst", 0.8, r.burst/r.rawBurst, fmt.Sprintf("runlet %.2f pods/s ≥ 0.8 × raw %.2f pods/s", r.burst, r.rawBurst))
	check("delete p50", pct(r.del, .5), 1000, fmt.Sprintf("%.1f ms ≤ 1000 ms", pct(r.del, .5)))
	check("delete (default grace) p50", pct(r.graceDel, .5), 1000, fmt.Sprintf("%.1f ms ≤ 1000 ms", pct(r.graceDel, .5)))
	check("RSS, 0 pods", r.rss0, 40, fmt.Sprintf("%.1f MiB ≤ 40 MiB", r.rss0))
	check(fmt.Sprintf("RSS, %d pods", cfg.burst), r.rss100, 80, fmt.Sprintf("%.1f MiB ≤ 80 MiB", r.rss100))
	check("CPU at rest", r.cpu, 1, fmt.Sprintf("%.2f %% ≤ 1 %% of one core", r.cpu))
	check("CPU with probes", r.probeCPU, 5, fmt.Sprintf("%.2f %% ≤ 5 %% of one core, %d pods probed every second", r.probeCPU, cfg.burst))
	for _, n := range r.notes {
		b.WriteString(n)
	}
	fmt.Print(b.String())
}
