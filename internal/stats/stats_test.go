package stats

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/runlet/runlet/internal/runtime"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// fakeBackend answers Stats from a table and records what was asked.
type fakeBackend struct {
	stats map[string]runtime.ContainerStats
	asked []string
	err   error
}

func (f *fakeBackend) Stats(_ context.Context, ids []string) ([]runtime.ContainerStats, error) {
	f.asked = append(f.asked, ids...)
	var out []runtime.ContainerStats
	for _, id := range ids {
		if s, ok := f.stats[id]; ok {
			out = append(out, s)
		}
	}
	return out, f.err
}

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// twoPods: "web" runs two containers (one restarted: its old container has
// exited), "gone" has a sandbox that is no longer ready.
func twoPods() []*runtime.PodStatus {
	return []*runtime.PodStatus{
		{UID: "u1", Sandboxes: []runtime.Sandbox{{ID: "sb1", PodUID: "u1", Namespace: "ns", Name: "web", State: runtime.SandboxReady, CreatedAt: t0}},
			Containers: []runtime.Container{
				{ID: "c2", Name: "app", State: runtime.ContainerRunning, StartedAt: t0.Add(2 * time.Second)},
				{ID: "c1", Name: "app", State: runtime.ContainerExited, StartedAt: t0},
				{ID: "s1", Name: "sidecar", State: runtime.ContainerRunning, StartedAt: t0.Add(time.Second)},
			}},
		{UID: "u2", Sandboxes: []runtime.Sandbox{{ID: "sb2", PodUID: "u2", Namespace: "ns", Name: "gone", State: runtime.SandboxNotReady}},
			Containers: []runtime.Container{{ID: "g1", Name: "x", State: runtime.ContainerRunning}}},
	}
}

func newTestCollector(b *fakeBackend, pods []*runtime.PodStatus) *Collector {
	return New(Config{NodeName: "n1", Backend: b, Pods: func() []*runtime.PodStatus { return pods },
		NodeFsPath: ".", ImageFsPath: ".", ProcRoot: "testdata/proc"})
}

func TestNodeStatsFromProc(t *testing.T) {
	c := newTestCollector(&fakeBackend{}, nil)
	s, err := c.Summary(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := s.Node
	if n.NodeName != "n1" || n.StartTime.Unix() != 1796036439 {
		t.Errorf("node name/start: %q %v", n.NodeName, n.StartTime)
	}
	// busy = user+nice+system+irq+softirq+steal = 1405 ticks of 10 ms
	if got := *n.CPU.UsageCoreNanoSeconds; got != 14_050_000_000 {
		t.Errorf("cpu usage %d", got)
	}
	m := n.Memory
	if *m.UsageBytes != 6_144_000_000 || *m.WorkingSetBytes != 5_120_000_000 || *m.AvailableBytes != 3_072_000_000 ||
		*m.RSSBytes != 1_536_000_000 || *m.PageFaults != 125795607 || *m.MajorPageFaults != 44404 {
		t.Errorf("memory %+v", m)
	}
	if *n.Swap.SwapUsageBytes != 614_400 || *n.Swap.SwapAvailableBytes != 409_600 {
		t.Errorf("swap %+v", n.Swap)
	}
	if n.Network.Name != "eth0" || *n.Network.RxBytes != 1000 || *n.Network.TxErrors != 2 || len(n.Network.Interfaces) != 2 {
		t.Errorf("network %+v (default route is eth0, lo left out)", n.Network)
	}
	if *n.Rlimit.MaxPID != 4194304 || *n.Rlimit.NumOfRunningProcesses != 345 {
		t.Errorf("rlimit %+v", n.Rlimit)
	}
	if n.Fs == nil || *n.Fs.CapacityBytes == 0 || n.Runtime == nil || n.Runtime.ImageFs == nil {
		t.Errorf("fs %+v runtime %+v", n.Fs, n.Runtime)
	}
}

func TestPodStats(t *testing.T) {
	b := &fakeBackend{stats: map[string]runtime.ContainerStats{
		"c2": {ID: "c2", Time: t0.Add(10 * time.Second), CPUNanos: 4e9, MemoryWorkingSet: 100, MemoryUsageBytes: 120,
			MemoryLimitBytes: 1000, NetRxBytes: 7, NetTxBytes: 9, ProcessCount: 2},
		"s1": {ID: "s1", Time: t0.Add(10 * time.Second), CPUNanos: 1e9, MemoryWorkingSet: 50, MemoryUsageBytes: 60,
			MemoryLimitBytes: 1 << 62, NetRxBytes: 7, NetTxBytes: 9, ProcessCount: 1},
	}}
	s, err := newTestCollector(b, twoPods()).Summary(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(b.asked, ",") != "c2,s1" {
		t.Errorf("asked stats of %v; want the running containers of ready pods", b.asked)
	}
	if len(s.Pods) != 1 {
		t.Fatalf("pods %+v; want only the ready one", s.Pods)
	}
	p := s.Pods[0]
	if p.PodRef != (statsv1alpha1.PodReference{Name: "web", Namespace: "ns", UID: "u1"}) || !p.StartTime.Time.Equal(t0) {
		t.Errorf("pod ref %+v start %v", p.PodRef, p.StartTime)
	}
	if len(p.Containers) != 2 || p.Containers[0].Name != "app" || p.Containers[1].Name != "sidecar" {
		t.Fatalf("containers %+v", p.Containers)
	}
	app := p.Containers[0]
	// First sample: the average since the container started 8 s before.
	if *app.CPU.UsageCoreNanoSeconds != 4e9 || *app.CPU.UsageNanoCores != 5e8 {
		t.Errorf("app cpu %+v", app.CPU)
	}
	if *app.Memory.WorkingSetBytes != 100 || app.Memory.AvailableBytes == nil || *app.Memory.AvailableBytes != 900 {
		t.Errorf("app memory %+v", app.Memory)
	}
	if p.Containers[1].Memory.AvailableBytes != nil {
		t.Error("a container without a memory limit reports available bytes")
	}
	// sidecar: 1e9 ns over the 9 s since it started
	if *p.CPU.UsageCoreNanoSeconds != 5e9 || *p.CPU.UsageNanoCores != 5e8+111111111 || *p.Memory.WorkingSetBytes != 150 || *p.ProcessStats.ProcessCount != 3 {
		t.Errorf("pod sums cpu %+v memory %+v processes %+v", p.CPU, p.Memory, p.ProcessStats)
	}
	if p.Network.Name != "eth0" || *p.Network.RxBytes != 7 || *p.Network.TxBytes != 9 {
		t.Errorf("pod network counted once for the shared namespace: %+v", p.Network)
	}
	pods := s.Node.SystemContainers[0]
	if pods.Name != "pods" || *pods.Memory.WorkingSetBytes != 150 {
		t.Errorf("pods system container %+v", pods)
	}
}

func TestSummaryFailsWithTheBackend(t *testing.T) {
	c := newTestCollector(&fakeBackend{err: errors.New("podman down")}, twoPods())
	if _, err := c.Summary(context.Background()); err == nil {
		t.Fatal("Summary hid a backend error")
	}
	var buf bytes.Buffer
	for _, f := range c.ResourceMetrics(context.Background()) {
		_, _ = expfmt.MetricFamilyToText(&buf, f)
	}
	if !strings.Contains(buf.String(), "\nscrape_error 1\n") || strings.Contains(buf.String(), "node_cpu") {
		t.Errorf("metrics after a failed scrape:\n%s", buf.String())
	}
}

func TestCPURates(t *testing.T) {
	r := newCPURates()
	if got := r.nanoCores("k", 2e9, t0.Add(4*time.Second), t0); got != 5e8 {
		t.Errorf("first sample: %d; want the average since start", got)
	}
	if got := r.nanoCores("k", 3e9, t0.Add(6*time.Second), t0); got != 5e8 {
		t.Errorf("second sample: %d; want 1e9 ns over 2 s", got)
	}
	if got := r.nanoCores("k", 9e9, t0.Add(6*time.Second+time.Millisecond), t0); got != 5e8 {
		t.Errorf("sample within the window: %d; want the last rate", got)
	}
	if got := r.nanoCores("k", 1e9, t0.Add(10*time.Second), t0.Add(8*time.Second)); got != 5e8 {
		t.Errorf("after a counter reset: %d; want the average since the new start", got)
	}
	r.forget(t0.Add(time.Hour))
	if len(r.last) != 0 {
		t.Error("forget kept old samples")
	}
}
