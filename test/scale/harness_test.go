package scale

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// harness is one scale run on the framework's control plane.
type harness struct {
	t   *testing.T
	c   *framework.Cluster
	cfg config
	ca  *signer
	dir string
	// hollow and kubemark are the two kinds of hollow node's binaries.
	hollow, kubemark string
}

func newHarness(t *testing.T, c *framework.Cluster, cfg config) *harness {
	ca, err := loadSigner(c.PKIDir, c.Server)
	if err != nil {
		t.Fatalf("the control plane's CA: %v", err)
	}
	h := &harness{t: t, c: c, cfg: cfg, ca: ca, dir: filepath.Join(c.Dir, "scale")}
	h.hollow = filepath.Join(h.dir, "hollow")
	progress("building test/scale/hollow")
	build := exec.Command("go", "build", "-o", h.hollow, "./test/scale/hollow")
	build.Dir = c.RepoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./test/scale/hollow: %v\n%s", err, out)
	}
	progress("building kubemark (hack/kubemark-build.sh; cached)")
	kb := exec.Command("bash", "hack/kubemark-build.sh")
	kb.Dir, kb.Stderr = c.RepoRoot, os.Stderr
	out, err := kb.Output()
	if err != nil {
		t.Fatalf("hack/kubemark-build.sh: %v", err)
	}
	h.kubemark = strings.TrimSpace(lastLine(string(out)))
	return h
}

// baseline is the control plane's own traffic with no node: what each
// set's figures from /metrics are read net of.
type baseline struct {
	window   time.Duration
	requests map[string]float64 // per minute
	watches  map[string]float64
}

func (h *harness) measureBaseline() baseline {
	w := min(h.cfg.rest, time.Minute)
	progress("the control plane alone, no node: %v of its own requests and watches", w)
	before := h.scrapeAPIServer()
	time.Sleep(w)
	after := h.scrapeAPIServer()
	return baseline{window: w, requests: perMinute(delta(before.requests, after.requests), w), watches: after.watches}
}

func perMinute(m map[string]float64, w time.Duration) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		out[k] = v / w.Minutes()
	}
	return out
}

// setResult is one set's figures.
type setResult struct {
	kind           string
	nodes, pods    int
	ready, created time.Duration
	latencies      []time.Duration
	podsLo, podsHi int
	window         time.Duration
	// metrics are the window's requests per minute from /metrics, net of
	// the baseline, and the watches open at its end, net of the
	// baseline's; audit the same, of the set's node identities alone.
	metrics, audit  map[string]float64
	metricW, auditW map[string]float64
	auditIdentities int
	mem             memStats
	// cpu is the median node's share of a core at rest, in per cent.
	cpu              float64
	deleted, stopped time.Duration
}

// runSet runs one set from start to end: its nodes, its pods, the window
// at rest, the pods' deletion and the nodes' end.
func (h *harness) runSet(kind string, base baseline) *setResult {
	cfg := h.cfg
	r := &setResult{kind: kind, nodes: cfg.nodes, pods: cfg.nodes * cfg.podsPerNode}
	ns := h.namespace("scale-" + kind)
	progress("%s: starting %d hollow nodes", kind, cfg.nodes)
	t0 := time.Now()
	s := h.startSet(kind)
	defer h.stopSet(s, r)
	h.waitReady(s, 10*time.Minute)
	r.ready = time.Since(t0)
	progress("%s: %d nodes Ready after %v; creating %d pods", kind, cfg.nodes, r.ready.Round(time.Second), r.pods)
	t0 = time.Now()
	starts := h.createPods(ns, kind, r.pods, 15*time.Minute)
	r.created = time.Since(t0)
	r.latencies = starts.latencies()
	r.podsLo, r.podsHi = starts.perNode()
	progress("%s: %d pods Running after %v: p50 %v, p99 %v; settling %v, then %v at rest",
		kind, r.pods, r.created.Round(time.Second), percentile(r.latencies, .5).Round(time.Millisecond),
		percentile(r.latencies, .99).Round(time.Millisecond), cfg.settle, cfg.rest)
	h.atRest(s, r, base)
	t0 = time.Now()
	h.deletePods(ns, r.pods)
	r.deleted = time.Since(t0)
	return r
}

// atRest reads the set's figures at rest: after settling, a window of
// requests, then the watches, memory and CPU at its end.
func (h *harness) atRest(s *nodeSet, r *setResult, base baseline) {
	time.Sleep(h.cfg.settle)
	before, from, cpu0 := h.scrapeAPIServer(), time.Now(), s.cpuSeconds()
	time.Sleep(h.cfg.rest)
	after, to, cpu1 := h.scrapeAPIServer(), time.Now(), s.cpuSeconds()
	r.window = to.Sub(from)
	r.cpu = cpuMedian(cpu0, cpu1, r.window)
	r.metrics = netOf(perMinute(delta(before.requests, after.requests), r.window), base.requests)
	r.metricW = netOf(after.watches, base.watches)
	split, err := readAudit(filepath.Join(h.c.CPDir, "logs"), "hollow-"+r.kind+"-", from, to)
	if err != nil {
		h.t.Fatalf("audit log: %v", err)
	}
	r.audit, r.auditW, r.auditIdentities = perMinute(split.requests, r.window), split.watches, split.identities
	if r.mem, err = s.memory(); err != nil {
		h.t.Fatalf("memory: %v", err)
	}
	progress("%s: at rest, %.1f requests/node/min (audit %.1f), %.1f open watches/node (audit %.1f), RSS %.1f MiB/node",
		r.kind, sum(r.metrics)/float64(r.nodes), sum(r.audit)/float64(r.nodes), sum(r.metricW)/float64(r.nodes),
		sum(r.auditW)/float64(r.nodes), r.mem.rssMedian)
}

// netOf is m less the baseline, key by key, never below zero.
func netOf(m, base map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		if d := v - base[k]; d > 0.0001 {
			out[k] = d
		}
	}
	return out
}

func sum(m map[string]float64) float64 {
	var s float64
	for _, v := range m {
		s += v
	}
	return s
}

func (h *harness) namespace(name string) string {
	_, err := h.c.Client.CoreV1().Namespaces().Create(context.Background(),
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		h.t.Fatal(err)
	}
	return name
}

// deletePods deletes the set's pods at the pace they were created (one
// call for all 3,000 outlasts the apiserver's request timeout) and waits
// until the nodes have let them go.
func (h *harness) deletePods(ns string, n int) {
	progress("%s: deleting the %d pods", ns, n)
	pods := h.c.Client.CoreV1().Pods(ns)
	err := h.paced(n, func(i int) error {
		if err := pods.Delete(context.Background(), podName(i), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		return nil
	})
	if err != nil {
		h.t.Fatal(err)
	}
	framework.Eventually(h.t, 10*time.Minute, "the pods gone from "+ns, func() (bool, error) {
		list, err := pods.List(context.Background(), metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return false, err
		}
		if len(list.Items) > 0 {
			return false, fmt.Errorf("%d left", len(list.Items))
		}
		return true, nil
	})
}

// stopSet ends the set's nodes and removes their Node objects, so that the
// next set meets a control plane without them.
func (h *harness) stopSet(s *nodeSet, r *setResult) {
	t0 := time.Now()
	s.stop()
	r.stopped = time.Since(t0)
	err := h.c.Client.CoreV1().Nodes().DeleteCollection(context.Background(), metav1.DeleteOptions{},
		metav1.ListOptions{LabelSelector: setLabel + "=" + s.kind})
	if err != nil {
		h.t.Errorf("deleting the %s nodes: %v", s.kind, err)
	}
	progress("%s: nodes stopped in %v", s.kind, r.stopped.Round(time.Second))
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[scale %s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
