package bench

import (
	"fmt"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// opStats is runlet's calls to its backend by operation: count and total time.
type opStats map[string]struct {
	n   uint64
	sum float64
}

// scrapeOps reads runlet_runtime_operations_duration_seconds from runlet.
func scrapeOps(metricsURL string) (opStats, error) {
	families, err := scrape(metricsURL)
	if err != nil {
		return nil, err
	}
	out := opStats{}
	f := families["runlet_runtime_operations_duration_seconds"]
	if f == nil {
		return out, nil
	}
	for _, m := range f.GetMetric() {
		out[label(m, "operation")] = struct {
			n   uint64
			sum float64
		}{m.GetHistogram().GetSampleCount(), m.GetHistogram().GetSampleSum()}
	}
	return out, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// opsReport prints the backend calls made between two scrapes, busiest
// first: where a phase's time went on the backend's side.
func opsReport(title string, before, after opStats, per int) string {
	type row struct {
		op      string
		n       uint64
		sum     float64
		perItem float64
	}
	var rows []row
	for op, a := range after {
		b := before[op]
		if n := a.n - b.n; n > 0 {
			rows = append(rows, row{op, n, a.sum - b.sum, float64(n) / float64(per)})
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].sum > rows[j].sum })
	var s strings.Builder
	fmt.Fprintf(&s, "\n%s: backend calls by runlet (per pod, mean, total)\n", title)
	for _, r := range rows {
		fmt.Fprintf(&s, "  %-32s %6.1f/pod %8.1f ms %9.1f ms\n", r.op, r.perItem, r.sum/float64(r.n)*1000, r.sum*1000)
	}
	return s.String()
}
