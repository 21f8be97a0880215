package bench

import (
	"fmt"
	"math"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// histo is one histogram series: count, sum (s) and its cumulative buckets.
type histo struct {
	n       uint64
	sum     float64
	buckets []*dto.Bucket
}

// histos are a histogram's series by the value of one label ("" for an unlabelled one).
type histos map[string]histo

// histograms reads the histogram name from a scrape, by its label key.
func histograms(fams map[string]*dto.MetricFamily, name, key string) histos {
	out := histos{}
	if fams[name] == nil {
		return out
	}
	for _, m := range fams[name].GetMetric() {
		h := m.GetHistogram()
		out[label(m, key)] = histo{h.GetSampleCount(), h.GetSampleSum(), h.GetBucket()}
	}
	return out
}

// since is what was observed between an earlier reading and this one.
func (h histo) since(before histo) histo {
	d := histo{n: h.n - before.n, sum: h.sum - before.sum}
	for i, b := range h.buckets {
		c := b.GetCumulativeCount()
		if i < len(before.buckets) {
			c -= before.buckets[i].GetCumulativeCount()
		}
		d.buckets = append(d.buckets, &dto.Bucket{CumulativeCount: &c, UpperBound: b.UpperBound})
	}
	return d
}

// quantile is the upper bound (ms) of the bucket the q-quantile falls in: a histogram's coarse answer.
func (h histo) quantile(q float64) float64 {
	rank := uint64(math.Ceil(q * float64(h.n)))
	for _, b := range h.buckets {
		if b.GetCumulativeCount() >= rank && rank > 0 {
			return b.GetUpperBound() * 1000
		}
	}
	return math.NaN()
}

func (h histo) meanMS() float64 { return h.sum / float64(h.n) * 1000 }

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// opsReport prints the runtime calls an agent made between two readings, busiest first: where a
// phase's time went on the runtime's side (runlet_runtime_operations_duration_seconds by operation,
// kubelet_runtime_operations_duration_seconds by operation_type).
func opsReport(title string, before, after histos, per int) string {
	type row struct {
		op      string
		n       uint64
		sum     float64
		perItem float64
	}
	var rows []row
	for op, a := range after {
		if d := a.since(before[op]); d.n > 0 {
			rows = append(rows, row{op, d.n, d.sum, float64(d.n) / float64(per)})
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].sum > rows[j].sum })
	var s strings.Builder
	fmt.Fprintf(&s, "\n%s (per pod, mean, total)\n", title)
	for _, r := range rows {
		fmt.Fprintf(&s, "  %-32s %6.1f/pod %8.1f ms %9.1f ms\n", r.op, r.perItem, r.sum/float64(r.n)*1000, r.sum*1000)
	}
	return s.String()
}
