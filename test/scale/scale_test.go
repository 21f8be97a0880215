// Package scale is `make scale`: a cluster of hollow nodes on one real
// control plane, as kubemark tests the kubelet at scale. Two node sets take
// turns on it: hollow runlets (test/scale/hollow: runlet's whole node on the
// in-memory backend) and kubemark's hollow kubelets (the kubelet's whole core
// on a fake CRI), each carrying the same pods. For each set it reports the
// apiserver requests per node per minute at rest, by verb and resource, the
// open watches per node, the pod-start latency (create → Running seen by a
// watch) and each hollow node's memory, then runlet's ratios to kubemark's
// with PASS or FAIL against the targets. The figures are reported, never
// asserted: a test fails only when the run itself does (a node that never
// registers, a pod that never runs). It does nothing unless RUNLET_SCALE=1,
// so `go test ./...` skips it at once.
package scale

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
)

func TestMain(m *testing.M) {
	if os.Getenv("RUNLET_SCALE") != "1" {
		os.Exit(m.Run())
	}
	framework.Main(m)
}

// config is the run's shape, from RUNLET_SCALE_* (docs/scale.md).
type config struct {
	nodes, podsPerNode int
	// createQPS is how many pods are created a second, as clusterloader2
	// paces its pods; the SLO's latency is measured at a steady rate, not
	// behind a queue of thousands.
	createQPS float64
	// settle is the wait after the last pod runs, before the window at
	// rest; rest is that window: 5 minutes by default, the kubelet's
	// nodeStatusReportFrequency, so that each node's periodic status write
	// falls in it once.
	settle, rest time.Duration
	// sets are the node sets, in the order they take turns.
	sets []string
}

func loadConfig() config {
	c := config{
		nodes: envInt("RUNLET_SCALE_NODES", 100), podsPerNode: envInt("RUNLET_SCALE_PODS", 30),
		createQPS: float64(envInt("RUNLET_SCALE_QPS", 20)),
		settle:    envDuration("RUNLET_SCALE_SETTLE", time.Minute), rest: envDuration("RUNLET_SCALE_REST", 5*time.Minute),
		sets: []string{setKubemark, setRunlet},
	}
	if v := os.Getenv("RUNLET_SCALE_SETS"); v != "" {
		c.sets = strings.Split(v, ",")
	}
	return c
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func TestScale(t *testing.T) {
	if os.Getenv("RUNLET_SCALE") != "1" {
		t.Skip("the scale run runs with RUNLET_SCALE=1 (make scale)")
	}
	cfg := loadConfig()
	c := framework.Get(t)
	raiseLimits(t, cfg.nodes)
	t0 := time.Now()
	h := newHarness(t, c, cfg)
	progress("%d nodes a set, %d pods a node, pods created at %.0f/s; sets in turn: %s",
		cfg.nodes, cfg.podsPerNode, cfg.createQPS, strings.Join(cfg.sets, ", "))
	base := h.measureBaseline()
	var results []*setResult
	for _, kind := range cfg.sets {
		results = append(results, h.runSet(kind, base))
	}
	report(t, cfg, base, results, time.Since(t0))
}
