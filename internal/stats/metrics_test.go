package stats

import (
	"bytes"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// TestResourceMetricsFormat pins the kubelet's /metrics/resource shape:
// names, help, types, label names and order, timestamps.
func TestResourceMetricsFormat(t *testing.T) {
	at := metav1.NewTime(time.UnixMilli(1796036439123))
	start := metav1.NewTime(time.Unix(1796036000, 500_000_000))
	s := &statsv1alpha1.Summary{
		Node: statsv1alpha1.NodeStats{
			CPU:    &statsv1alpha1.CPUStats{Time: at, UsageCoreNanoSeconds: ptr(uint64(2_500_000_000))},
			Memory: &statsv1alpha1.MemoryStats{Time: at, WorkingSetBytes: ptr(uint64(1024))},
		},
		Pods: []statsv1alpha1.PodStats{{
			PodRef: statsv1alpha1.PodReference{Name: "web", Namespace: "ns"},
			CPU:    &statsv1alpha1.CPUStats{Time: at, UsageCoreNanoSeconds: ptr(uint64(1_000_000_000))},
			Memory: &statsv1alpha1.MemoryStats{Time: at, WorkingSetBytes: ptr(uint64(300))},
			Containers: []statsv1alpha1.ContainerStats{
				{Name: "b", StartTime: start, CPU: &statsv1alpha1.CPUStats{Time: at, UsageCoreNanoSeconds: ptr(uint64(250_000_000))}},
				{Name: "a", StartTime: start, Memory: &statsv1alpha1.MemoryStats{Time: at, WorkingSetBytes: ptr(uint64(300))}},
			},
		}},
	}
	var buf bytes.Buffer
	for _, f := range ResourceMetrics(s) {
		if _, err := expfmt.MetricFamilyToText(&buf, f); err != nil {
			t.Fatal(err)
		}
	}
	want := `# HELP container_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the container in core-seconds
# TYPE container_cpu_usage_seconds_total counter
container_cpu_usage_seconds_total{container="b",namespace="ns",pod="web"} 0.25 1796036439123
# HELP container_memory_working_set_bytes [STABLE] Current working set of the container in bytes
# TYPE container_memory_working_set_bytes gauge
container_memory_working_set_bytes{container="a",namespace="ns",pod="web"} 300 1796036439123
# HELP container_start_time_seconds [STABLE] Start time of the container since unix epoch in seconds
# TYPE container_start_time_seconds gauge
container_start_time_seconds{container="a",namespace="ns",pod="web"} 1.7960360005e+09
container_start_time_seconds{container="b",namespace="ns",pod="web"} 1.7960360005e+09
# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds
# TYPE node_cpu_usage_seconds_total counter
node_cpu_usage_seconds_total 2.5 1796036439123
# HELP node_memory_working_set_bytes [STABLE] Current working set of the node in bytes
# TYPE node_memory_working_set_bytes gauge
node_memory_working_set_bytes 1024 1796036439123
# HELP pod_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the pod in core-seconds
# TYPE pod_cpu_usage_seconds_total counter
pod_cpu_usage_seconds_total{namespace="ns",pod="web"} 1 1796036439123
# HELP pod_memory_working_set_bytes [STABLE] Current working set of the pod in bytes
# TYPE pod_memory_working_set_bytes gauge
pod_memory_working_set_bytes{namespace="ns",pod="web"} 300 1796036439123
# HELP resource_scrape_error [STABLE] 1 if there was an error while getting container metrics, 0 otherwise
# TYPE resource_scrape_error gauge
resource_scrape_error 0
# HELP scrape_error [ALPHA] (Deprecated since 1.29.0) 1 if there was an error while getting container metrics, 0 otherwise
# TYPE scrape_error gauge
scrape_error 0
`
	if buf.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", buf.String(), want)
	}
}
