package stats

import (
	"context"
	"sort"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Help texts as the kubelet's component-base registry renders them,
// stability level first, so scrapers see the same series and docs.
const (
	helpNodeCPU      = "[STABLE] Cumulative cpu time consumed by the node in core-seconds"
	helpNodeMem      = "[STABLE] Current working set of the node in bytes"
	helpNodeSwap     = "[ALPHA] Current swap usage of the node in bytes. Reported only on non-windows systems"
	helpCtrCPU       = "[STABLE] Cumulative cpu time consumed by the container in core-seconds"
	helpCtrMem       = "[STABLE] Current working set of the container in bytes"
	helpCtrStart     = "[STABLE] Start time of the container since unix epoch in seconds"
	helpPodCPU       = "[STABLE] Cumulative cpu time consumed by the pod in core-seconds"
	helpPodMem       = "[STABLE] Current working set of the pod in bytes"
	helpScrapeErr    = "[ALPHA] (Deprecated since 1.29.0) 1 if there was an error while getting container metrics, 0 otherwise"
	helpResScrapeErr = "[STABLE] 1 if there was an error while getting container metrics, 0 otherwise"
)

// ResourceMetrics is the node's /metrics/resource. A failed collection
// yields only the scrape error gauges set to 1, as on the kubelet.
func (c *Collector) ResourceMetrics(ctx context.Context) []*dto.MetricFamily {
	s, err := c.Summary(ctx)
	if err != nil {
		s = nil
	}
	return ResourceMetrics(s)
}

// ResourceMetrics renders a summary (nil: a failed collection) in the
// kubelet's /metrics/resource families, sorted by name like its registry.
func ResourceMetrics(s *statsv1alpha1.Summary) []*dto.MetricFamily {
	fams := map[string]*dto.MetricFamily{}
	add := func(name, help string, typ dto.MetricType, m *dto.Metric) {
		f, ok := fams[name]
		if !ok {
			f = &dto.MetricFamily{Name: ptr(name), Help: ptr(help), Type: typ.Enum()}
			fams[name] = f
		}
		if typ == dto.MetricType_COUNTER {
			m.Counter, m.Gauge = &dto.Counter{Value: m.Gauge.Value}, nil
		}
		f.Metric = append(f.Metric, m)
	}
	scrapeErr := 1.0
	if s != nil {
		scrapeErr = 0
		addNode(add, s.Node)
		for _, p := range s.Pods {
			addPod(add, p)
		}
	}
	add("scrape_error", helpScrapeErr, dto.MetricType_GAUGE, sample(scrapeErr, time.Time{}))
	add("resource_scrape_error", helpResScrapeErr, dto.MetricType_GAUGE, sample(scrapeErr, time.Time{}))
	return sorted(fams)
}

type addFunc func(name, help string, typ dto.MetricType, m *dto.Metric)

func addNode(add addFunc, n statsv1alpha1.NodeStats) {
	if n.CPU != nil && n.CPU.UsageCoreNanoSeconds != nil {
		add("node_cpu_usage_seconds_total", helpNodeCPU, dto.MetricType_COUNTER, sample(seconds(*n.CPU.UsageCoreNanoSeconds), n.CPU.Time.Time))
	}
	if n.Memory != nil && n.Memory.WorkingSetBytes != nil {
		add("node_memory_working_set_bytes", helpNodeMem, dto.MetricType_GAUGE, sample(float64(*n.Memory.WorkingSetBytes), n.Memory.Time.Time))
	}
	if n.Swap != nil && n.Swap.SwapUsageBytes != nil {
		add("node_swap_usage_bytes", helpNodeSwap, dto.MetricType_GAUGE, sample(float64(*n.Swap.SwapUsageBytes), n.Swap.Time.Time))
	}
}

func addPod(add addFunc, p statsv1alpha1.PodStats) {
	pod, ns := p.PodRef.Name, p.PodRef.Namespace
	for _, c := range p.Containers {
		if c.StartTime.Unix() > 0 {
			add("container_start_time_seconds", helpCtrStart, dto.MetricType_GAUGE,
				sample(float64(c.StartTime.UnixNano())/float64(time.Second), time.Time{}, "container", c.Name, "namespace", ns, "pod", pod))
		}
		if c.CPU != nil && c.CPU.UsageCoreNanoSeconds != nil {
			add("container_cpu_usage_seconds_total", helpCtrCPU, dto.MetricType_COUNTER,
				sample(seconds(*c.CPU.UsageCoreNanoSeconds), c.CPU.Time.Time, "container", c.Name, "namespace", ns, "pod", pod))
		}
		if c.Memory != nil && c.Memory.WorkingSetBytes != nil {
			add("container_memory_working_set_bytes", helpCtrMem, dto.MetricType_GAUGE,
				sample(float64(*c.Memory.WorkingSetBytes), c.Memory.Time.Time, "container", c.Name, "namespace", ns, "pod", pod))
		}
	}
	if p.CPU != nil && p.CPU.UsageCoreNanoSeconds != nil {
		add("pod_cpu_usage_seconds_total", helpPodCPU, dto.MetricType_COUNTER,
			sample(seconds(*p.CPU.UsageCoreNanoSeconds), p.CPU.Time.Time, "namespace", ns, "pod", pod))
	}
	if p.Memory != nil && p.Memory.WorkingSetBytes != nil {
		add("pod_memory_working_set_bytes", helpPodMem, dto.MetricType_GAUGE,
			sample(float64(*p.Memory.WorkingSetBytes), p.Memory.Time.Time, "namespace", ns, "pod", pod))
	}
}

func seconds(nanos uint64) float64 { return float64(nanos) / float64(time.Second) }

// sample is one series (a gauge until add makes it a counter); labels come
// as name/value pairs in name order, and a zero time means no timestamp
// (the kubelet stamps only measured values).
func sample(v float64, at time.Time, labels ...string) *dto.Metric {
	m := &dto.Metric{}
	for i := 0; i+1 < len(labels); i += 2 {
		m.Label = append(m.Label, &dto.LabelPair{Name: ptr(labels[i]), Value: ptr(labels[i+1])})
	}
	m.Gauge = &dto.Gauge{Value: ptr(v)}
	if !at.IsZero() {
		m.TimestampMs = ptr(at.UnixMilli())
	}
	return m
}

func sorted(fams map[string]*dto.MetricFamily) []*dto.MetricFamily {
	out := make([]*dto.MetricFamily, 0, len(fams))
	for _, f := range fams {
		sort.Slice(f.Metric, func(i, j int) bool { return labelKey(f.Metric[i]) < labelKey(f.Metric[j]) })
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GetName() < out[j].GetName() })
	return out
}

func labelKey(m *dto.Metric) string {
	var b strings.Builder
	for _, l := range m.Label {
		b.WriteString(l.GetValue())
		b.WriteByte(0)
	}
	return b.String()
}
