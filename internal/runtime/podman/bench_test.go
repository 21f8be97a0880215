package podman

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime/podman/libpod"
	"github.com/runlet/runlet/internal/runtime/runtimetest"
)

// BenchmarkPodStart measures one pod with one container from nothing to
// started, and reports the phases: go test -run x -bench PodStart -benchtime 20x
func BenchmarkPodStart(b *testing.B) {
	be := realBackend(b)
	ctx := context.Background()
	var sb, cr, st, all []time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		s, err := be.CreateSandbox(ctx, testSandbox(runtimetest.Namespace+"-bench-"+time.Now().Format("150405.000000"), "bench"))
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		id, err := be.CreateContainer(ctx, s.ID, testContainer(s, "c", "sleep", "3600"))
		if err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if err := be.StartContainer(ctx, id); err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		sb, cr, st, all = append(sb, t1.Sub(t0)), append(cr, t2.Sub(t1)), append(st, t3.Sub(t2)), append(all, t3.Sub(t0))
		b.StopTimer()
		if err := be.RemoveSandbox(ctx, s.ID); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(median(sb).Milliseconds()), "ms-sandbox")
	b.ReportMetric(float64(median(cr).Milliseconds()), "ms-create")
	b.ReportMetric(float64(median(st).Milliseconds()), "ms-start")
	b.ReportMetric(float64(median(all).Milliseconds()), "ms-total-p50")
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// BenchmarkRawPodStart is the physical limit: the same pod through the bare
// client (create pod, create container, start container, which also starts
// the infra container), as docs/DESIGN.md's "raw backend".
func BenchmarkRawPodStart(b *testing.B) {
	be := realBackend(b)
	c, ctx := be.Client(), context.Background()
	var all []time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		pod, err := c.CreatePod(ctx, libpod.PodSpec{Name: "rawbench-" + time.Now().Format("150405.000000"),
			SharedNamespaces: []string{"net", "ipc", "uts"}})
		if err != nil {
			b.Fatal(err)
		}
		id, err := c.CreateContainer(ctx, libpod.ContainerSpec{Pod: pod, Image: runtimetest.Image, Command: []string{"sleep", "3600"},
			RLimits: be.RLimits(), OCIRuntime: be.OCIRuntime(), RestartPolicy: "no"})
		if err != nil {
			b.Fatal(err)
		}
		if err := c.StartContainer(ctx, id); err != nil {
			b.Fatal(err)
		}
		all = append(all, time.Since(t0))
		b.StopTimer()
		if err := c.RemovePod(ctx, pod); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(median(all).Milliseconds()), "ms-total-p50")
}
