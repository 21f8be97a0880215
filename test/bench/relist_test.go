package bench

import (
	"math"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/podman"
)

// relist is the cost of one full relist of the node's pods.
type relist struct {
	pods      int
	p50, mean float64 // ms
	// pod is the mean of a single-pod refresh (runlet's List of one pod), the
	// listing each change of a pod costs between relists.
	pod float64 // ms
}

// relistSamples is how many relists are timed at each pod count.
const relistSamples = 10

// relistCost times the listing a runlet relist makes, through runlet's own
// podman backend and owner filter, on the node's pods at rest. runlet itself
// relists every 300 s while podman's event stream is up, too seldom to be
// caught in a bench window; its runlet_pleg_relist_duration_seconds over the
// whole run is reported beside (relistHistogram). The first listing fills
// the backend's per-container detail cache, as runlet's first relist does,
// and is not counted.
func relistCost(n *node, pods int) relist {
	out := relist{pods: pods, p50: math.NaN(), mean: math.NaN()}
	be, err := podman.New(n.ctx, podman.Options{Socket: n.c.Socket(), Owner: n.rl.NodeName})
	if err != nil {
		n.t.Fatal(err)
	}
	defer func() { _ = be.Close() }()
	sbs, _, err := be.List(n.ctx, runtime.ListFilter{})
	if err != nil {
		n.t.Fatal(err)
	}
	if len(sbs) != pods {
		n.t.Fatalf("relist: %d sandboxes listed, want %d", len(sbs), pods)
	}
	var took []time.Duration
	for range relistSamples {
		t0 := time.Now()
		if _, _, err := be.List(n.ctx, runtime.ListFilter{}); err != nil {
			n.t.Fatal(err)
		}
		took = append(took, time.Since(t0))
		time.Sleep(100 * time.Millisecond)
	}
	out.p50, out.mean = pct(took, .5), meanMS(took)
	took = took[:0]
	for _, sb := range sbs[:min(len(sbs), relistSamples)] {
		t0 := time.Now()
		if _, _, err := be.List(n.ctx, runtime.ListFilter{PodUID: sb.PodUID}); err != nil {
			n.t.Fatal(err)
		}
		took = append(took, time.Since(t0))
	}
	out.pod = meanMS(took)
	return out
}

func meanMS(ds []time.Duration) float64 {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return float64(sum) / float64(len(ds)) / float64(time.Millisecond)
}

// relistHistogram is runlet's own count and mean (ms) of relists over the run.
func relistHistogram(metricsURL string) (float64, float64) {
	fams, err := scrape(metricsURL)
	if err != nil || fams["runlet_pleg_relist_duration_seconds"] == nil {
		return math.NaN(), math.NaN()
	}
	h := fams["runlet_pleg_relist_duration_seconds"].GetMetric()[0].GetHistogram()
	n := float64(h.GetSampleCount())
	return n, h.GetSampleSum() / n * 1000
}
