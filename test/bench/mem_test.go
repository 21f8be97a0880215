package bench

import (
	"fmt"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	dto "github.com/prometheus/client_model/go"
)

// mem is one reading of a process's memory, in MiB: the resident set split
// as the kernel accounts it, and the Go heap in use as runlet reports it.
type mem struct {
	rss, anon, file, heap float64
}

func noMem() mem { n := math.NaN(); return mem{n, n, n, n} }

func (m mem) String() string {
	return fmt.Sprintf("anon %.1f, file %.1f, Go heap %.1f MiB", m.anon, m.file, m.heap)
}

// readMem reads VmRSS, RssAnon and RssFile of pid and, when metricsURL is
// set, go_memstats_heap_inuse_bytes from there.
func readMem(t *testing.T, pid int, metricsURL string) mem {
	m := noMem()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			continue
		}
		switch f[0] {
		case "VmRSS:":
			m.rss = kb / 1024
		case "RssAnon:":
			m.anon = kb / 1024
		case "RssFile:":
			m.file = kb / 1024
		}
	}
	if math.IsNaN(m.rss) {
		t.Fatalf("no VmRSS in /proc/%d/status", pid)
	}
	if metricsURL != "" {
		m.heap = metricValue(metricsURL, "go_memstats_heap_inuse_bytes") / (1 << 20)
	}
	return m
}

// scrape reads every metric family runlet exports.
func scrape(metricsURL string) (map[string]*dto.MetricFamily, error) {
	return scrapeWith(&http.Client{Timeout: 10 * time.Second}, metricsURL)
}

// scrapeWith reads every metric family of an endpoint through the client (the kubelet's needs the
// cluster admin's certificate).
func scrapeWith(c *http.Client, baseURL string) (map[string]*dto.MetricFamily, error) {
	resp, err := c.Get(baseURL + "/metrics")
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(resp.Body)
}

// metricValue is the value of an unlabelled gauge or counter (NaN if unreadable).
func metricValue(metricsURL, name string) float64 {
	fams, err := scrape(metricsURL)
	if err != nil || fams[name] == nil || len(fams[name].GetMetric()) == 0 {
		return math.NaN()
	}
	m := fams[name].GetMetric()[0]
	switch {
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return math.NaN()
}
