package eviction

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

func u64(v uint64) *uint64 { return &v }
func i64(v int64) *int64   { return &v }

// testSummary is a node with the given figures and one pod.
func testSummary(at time.Time) *statsapi.Summary {
	t := metav1.NewTime(at)
	return &statsapi.Summary{
		Node: statsapi.NodeStats{
			Memory: &statsapi.MemoryStats{Time: t, AvailableBytes: u64(1 << 30), WorkingSetBytes: u64(3 << 30)},
			Fs:     &statsapi.FsStats{Time: t, AvailableBytes: u64(1024), CapacityBytes: u64(2048), InodesFree: u64(10), Inodes: u64(1000)},
			Runtime: &statsapi.RuntimeStats{
				ImageFs:     &statsapi.FsStats{Time: t, AvailableBytes: u64(1 << 20), CapacityBytes: u64(2 << 20), InodesFree: u64(500), Inodes: u64(1000)},
				ContainerFs: &statsapi.FsStats{Time: t, AvailableBytes: u64(1 << 20), CapacityBytes: u64(2 << 20)},
			},
			Rlimit: &statsapi.RlimitStats{Time: t, MaxPID: i64(32768), NumOfRunningProcesses: i64(1000)},
			SystemContainers: []statsapi.ContainerStats{{Name: statsapi.SystemContainerPods,
				Memory: &statsapi.MemoryStats{Time: t, AvailableBytes: u64(2 << 30), WorkingSetBytes: u64(1 << 30)}}},
		},
		Pods: []statsapi.PodStats{{PodRef: statsapi.PodReference{Name: "p", Namespace: "ns", UID: "uid-p"},
			Memory: &statsapi.MemoryStats{WorkingSetBytes: u64(5 << 20)}}},
	}
}

func TestMakeSignalObservations(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	obs, statsFn := makeSignalObservations(testSummary(at))
	want := map[Signal][2]int64{ // available, capacity
		SignalMemoryAvailable:            {1 << 30, 4 << 30},
		SignalAllocatableMemoryAvailable: {2 << 30, 3 << 30},
		SignalNodeFsAvailable:            {1024, 2048},
		SignalNodeFsInodesFree:           {10, 1000},
		SignalImageFsAvailable:           {1 << 20, 2 << 20},
		SignalImageFsInodesFree:          {500, 1000},
		SignalPIDAvailable:               {32768 - 1000, 32768},
	}
	if len(obs) != len(want) {
		t.Errorf("observed %d signals; want %d (no containerfs: it is the imagefs)", len(obs), len(want))
	}
	for sig, w := range want {
		o, ok := obs[sig]
		if !ok {
			t.Errorf("%s: not observed", sig)
			continue
		}
		if o.available.Value() != w[0] || o.capacity.Value() != w[1] {
			t.Errorf("%s: available %v capacity %v; want %d %d", sig, o.available, o.capacity, w[0], w[1])
		}
		if !o.time.Time.Equal(at) {
			t.Errorf("%s: observed at %v; want the figure's time %v", sig, o.time, at)
		}
	}
	pod := &v1.Pod{}
	pod.UID = "uid-p"
	if ps, ok := statsFn(pod); !ok || *ps.Memory.WorkingSetBytes != 5<<20 {
		t.Errorf("stats of the pod: %+v, %v", ps, ok)
	}
	pod.UID = "other"
	if _, ok := statsFn(pod); ok {
		t.Error("stats found for a pod the summary lacks")
	}
}

// TestObservationsOfAPartialSummary: a node summary without pods or with
// figures missing observes only what it has.
func TestObservationsOfAPartialSummary(t *testing.T) {
	s := &statsapi.Summary{Node: statsapi.NodeStats{Fs: &statsapi.FsStats{AvailableBytes: u64(1), CapacityBytes: u64(2)}}}
	obs, _ := makeSignalObservations(s)
	if len(obs) != 1 {
		t.Errorf("observations %v; want nodefs.available only", obs)
	}
	got := GetThresholdQuantity(ThresholdValue{Percentage: 0.1}, resource.NewQuantity(64<<20, resource.BinarySI))
	if got.Value() != 6710886 {
		t.Errorf("10%% of 64Mi = %v; want 6710886 as the kubelet computes it", got.Value())
	}
}
