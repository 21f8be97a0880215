package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"slices"
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
	if os.Getenv("NODE_CIDR_MASK") == "" {
		// A node's /24 holds 254 pods; the bursts of 300 need a wider podCIDR
		// (hack/cp-up.sh's controller-manager hands out one of this size).
		_ = os.Setenv("NODE_CIDR_MASK", "22")
	}
	framework.Main(m)
}

// config holds the sample counts; each can be changed through the environment.
type config struct {
	n         int           // RUNLET_BENCH_N: samples of sequential start, exit and delete
	bursts    []int         // RUNLET_BENCH_BURST: pods created at once, one burst per size; the first is also measured at rest, on every node
	clients   int           // RUNLET_BENCH_CLIENTS: concurrent clients creating a burst, runlet's (API) and raw's (libpod)
	scale     int           // RUNLET_BENCH_SCALE: pods on the node for the scale figures; 0 skips them
	secrets   int           // RUNLET_BENCH_SECRETS: unrelated Secrets for the memory figure; 0 skips it
	cpuWindow time.Duration // RUNLET_BENCH_CPU_SECONDS: window of the CPU figures
	settle    time.Duration // RUNLET_BENCH_SETTLE_SECONDS: quiet time before RSS/CPU readings
	quiet     time.Duration // RUNLET_BENCH_QUIET_SECONDS: the longest wait for a settled host before a workload
	runc      bool          // RUNLET_BENCH_RUNC (1): also measure runlet on runc; 0 skips it
	kubelet   bool          // RUNLET_BENCH_KUBELET (1): also measure the kubelet on containerd; 0 skips it
	join      int           // RUNLET_BENCH_JOIN: samples of `runlet join` → node Ready; 0 skips them
	reboot    int           // RUNLET_BENCH_REBOOT: pods on the node rebooted with its apiserver down; 0 skips it
}

func loadConfig() config {
	return config{
		n:         envInt("RUNLET_BENCH_N", 20),
		bursts:    envInts("RUNLET_BENCH_BURST", []int{100, 300}),
		clients:   envInt("RUNLET_BENCH_CLIENTS", envInt("RUNLET_BENCH_RAW_CLIENTS", 4)),
		scale:     envInt("RUNLET_BENCH_SCALE", 0),
		secrets:   envInt("RUNLET_BENCH_SECRETS", 5000),
		cpuWindow: time.Duration(envInt("RUNLET_BENCH_CPU_SECONDS", 30)) * time.Second,
		settle:    time.Duration(envInt("RUNLET_BENCH_SETTLE_SECONDS", 10)) * time.Second,
		quiet:     time.Duration(envInt("RUNLET_BENCH_QUIET_SECONDS", 180)) * time.Second,
		runc:      envInt("RUNLET_BENCH_RUNC", 1) == 1,
		kubelet:   envInt("RUNLET_BENCH_KUBELET", 1) == 1,
		join:      envInt("RUNLET_BENCH_JOIN", 5),
		reboot:    envInt("RUNLET_BENCH_REBOOT", 20),
	}
}

// maxBurst is the largest burst: runlet on podman's --max-pods must hold it.
func (c config) maxBurst() int { return slices.Max(c.bursts) }

// maxPods is what the other nodes hold at most: the first burst, or the samples of a delete.
func (c config) maxPods() int { return max(c.bursts[0], 2*c.n+2) + 10 }

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 { // 0 is meaningful: RUNLET_BENCH_SCALE=0, RUNLET_BENCH_SECRETS=0 skip
		return v
	}
	return def
}

// envInts reads a comma-separated list of positive numbers ("100,300").
func envInts(name string, def []int) []int {
	var out []int
	for _, f := range strings.Split(os.Getenv(name), ",") {
		if v, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && v > 0 {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return def
	}
	return out
}

// results collects every figure; NaN (not measured) prints as "-".
type results struct {
	stacks                       map[string]*stackResults // by kind: runlet on podman, runlet on runc, the kubelet
	hostRest                     cpuWindow                // the host with every node at 0 pods
	rawStart, rawExit, rawDelete []time.Duration
	rawKill                      []time.Duration // kill call → inspect exited
	rawCNIStart                  []time.Duration // raw pods on runlet's pod network (CNI) instead of podman's bridge
	runcRawStart                 []time.Duration // raw runc + CNI
	rawBurst, burst              map[int]float64 // burst size → pods/s: raw podman, runlet on podman
	bound, exit                  []time.Duration // runlet on podman: create → bound; container exit → API status
	kill                         []time.Duration // kill call → API status
	resize                       []time.Duration // in-place resize call → the new limit in the status
	mem0, memSecrets, memN       mem             // runlet on podman at 0 pods; with cfg.secrets unrelated Secrets; with the first burst's pods
	floor                        mem             // vkfloor: the framework's node with a provider that does nothing
	relist, scaleRelist          relist          // cost of a relist with the first burst's and cfg.scale pods
	relistRunletN, relistRunlet  float64         // runlet's own relists over the run: count, mean ms
	scaleReady                   time.Duration   // cfg.scale pods created → all Ready
	scaleRest                    idle            // with cfg.scale pods
	probeGoroutines              float64         // runlet's goroutines with the httpGet probes, beyond its idle count
	join, joinRegistered         []time.Duration // exec of `runlet join` → Node Ready; → Node created
	bootstrapReady               []time.Duration // exec of runlet with the bootstrap kubeconfig → Node Ready
	rebootRunning                time.Duration   // a reboot with the apiserver down: runlet's exec → cfg.reboot pods Running; -1: not measured
	reconnectStatus              time.Duration   // then the apiserver resumed → their statuses in the API; -1: not measured
	reconnectRestarts            float64         // containers the reconnect restarted (NaN: not measured)
	notes                        []string        // printed after the table
}

func newResults() *results {
	nan := nan()
	none := relist{p50: nan, mean: nan}
	r := &results{stacks: map[string]*stackResults{}, hostRest: cpuWindow{procs: nan, host: nan},
		rawBurst: map[int]float64{}, burst: map[int]float64{}, mem0: noMem(), memSecrets: noMem(), memN: noMem(), floor: noMem(),
		relist: none, scaleRelist: none, relistRunletN: nan, relistRunlet: nan, scaleReady: -1,
		scaleRest: idle{cpu: nan, svcCPU: nan, mem: noMem(), svcMem: noMem()}, probeGoroutines: nan,
		rebootRunning: -1, reconnectStatus: -1, reconnectRestarts: nan}
	for _, k := range kinds {
		r.stacks[k] = newStackResults()
	}
	return r
}

func nan() float64 { return math.NaN() }

// TestBench measures the raw backends first, then runlet on podman, runlet on runc and the kubelet on
// containerd side by side on one control plane, taking turns.
func TestBench(t *testing.T) {
	if os.Getenv("RUNLET_BENCH") != "1" {
		t.Skip("benchmarks run with RUNLET_BENCH=1 (make bench)")
	}
	cfg := loadConfig()
	ctx, cancel := context.WithTimeout(context.Background(), 175*time.Minute)
	defer cancel()
	load0 := loadavg()
	r := newResults()
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

	// Each phase is a subtest that begins on a settled host, so that one
	// runs alone with -run TestBench/<phase>, and its nodes, pods and
	// namespaces are gone before the next phase.
	phase := func(name, what string, f func(t *testing.T)) {
		t.Run(name, func(t *testing.T) {
			r.notes = append(r.notes, waitQuiet(what, cfg.quiet))
			f(t)
		})
	}
	phase("raw", "raw podman and raw runc", func(t *testing.T) {
		benchRaw(t, ctx, cfg, be, run, r)
		benchRawCNI(t, ctx, cfg, be, run, r)
		if cfg.runc {
			benchRawRunc(t, ctx, cfg, saveTestImage(t), r)
		}
	})
	phase("nodes", "the nodes", func(t *testing.T) { benchNodes(t, ctx, cfg, be, r) })
	if cfg.join > 0 {
		phase("join", "runlet join", func(t *testing.T) { benchJoin(t, ctx, cfg, be, r) })
	}
	if cfg.reboot > 0 {
		phase("reboot", "a reboot with the apiserver down", func(t *testing.T) { benchReboot(t, ctx, cfg, r) })
	}
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
