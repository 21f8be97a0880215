package kuberuntime

import (
	"testing"

	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func rl(kv ...string) v1.ResourceList {
	out := v1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		out[v1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return out
}

// TestMilliCPUToShares is the kubelet's table (pkg/kubelet/cm).
func TestMilliCPUToShares(t *testing.T) {
	for _, tc := range []struct {
		milli int64
		want  uint64
	}{{0, 2}, {1, 2}, {2, 2}, {5, 5}, {10, 10}, {250, 256}, {1000, 1024}, {1500, 1536}, {256000, 262144}, {300000, 262144}, {1 << 62, 262144}, {-5, 2}} {
		if got := milliCPUToShares(tc.milli); got != tc.want {
			t.Errorf("milliCPUToShares(%d) = %d; want %d", tc.milli, got, tc.want)
		}
	}
}

func TestContainerResources(t *testing.T) {
	node := NodeOptions{MemoryCapacity: 8 << 30}
	cases := []struct {
		name     string
		req, lim v1.ResourceList
		want     runtime.Resources
		adj      int
	}{
		{"BestEffort", nil, nil, runtime.Resources{CPUShares: 2}, 1000},
		{"Guaranteed", rl("cpu", "500m", "memory", "64Mi"), rl("cpu", "500m", "memory", "64Mi"),
			runtime.Resources{CPUShares: 512, CPUMillis: 500, MemoryBytes: 64 << 20}, -997},
		{"Burstable, request only", rl("cpu", "250m", "memory", "1Gi"), nil, runtime.Resources{CPUShares: 256}, 875},
		{"limit alone gives the shares", nil, rl("cpu", "2"), runtime.Resources{CPUShares: 2048, CPUMillis: 2000}, 999},
	}
	for _, tc := range cases {
		pod := newPod(v1.RestartPolicyNever, "c")
		pod.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: tc.req, Limits: tc.lim}
		got := containerResources(pod, &pod.Spec.Containers[0], node)
		if got.OOMScoreAdj == nil || *got.OOMScoreAdj != tc.adj {
			t.Errorf("%s: oom_score_adj %v; want %d", tc.name, got.OOMScoreAdj, tc.adj)
		}
		got.OOMScoreAdj = nil
		if got != tc.want {
			t.Errorf("%s: %+v; want %+v", tc.name, got, tc.want)
		}
	}
}

// TestPodResources follows ResourceConfigForPod: quota and memory limit only
// when every container declares them, minimal shares for BestEffort, pids
// from --pod-max-pids.
func TestPodResources(t *testing.T) {
	node := NodeOptions{PodPidsLimit: 100}
	pod := newPod(v1.RestartPolicyNever, "a", "b")
	if got := podResources(pod, node); got != (runtime.Resources{CPUShares: 2, PidsLimit: 100}) {
		t.Errorf("BestEffort pod = %+v", got)
	}
	pod.Spec.Containers[0].Resources = v1.ResourceRequirements{Requests: rl("cpu", "100m", "memory", "10Mi"), Limits: rl("cpu", "100m", "memory", "10Mi")}
	pod.Spec.Containers[1].Resources = v1.ResourceRequirements{Requests: rl("cpu", "200m", "memory", "20Mi"), Limits: rl("cpu", "300m", "memory", "30Mi")}
	if got := podResources(pod, node); got != (runtime.Resources{CPUShares: 307, CPUMillis: 400, MemoryBytes: 40 << 20, PidsLimit: 100}) {
		t.Errorf("Burstable, all limits = %+v", got)
	}
	pod.Spec.Containers[1].Resources.Limits = rl("memory", "30Mi")
	if got := podResources(pod, NodeOptions{}); got != (runtime.Resources{CPUShares: 307, MemoryBytes: 40 << 20}) {
		t.Errorf("Burstable, one CPU limit missing = %+v; want no quota", got)
	}
	pod.Spec.Resources = &v1.ResourceRequirements{Limits: rl("cpu", "1", "memory", "1Gi"), Requests: rl("cpu", "1", "memory", "1Gi")}
	if got := podResources(pod, NodeOptions{}); got != (runtime.Resources{CPUShares: 1024, CPUMillis: 1000, MemoryBytes: 1 << 30}) {
		t.Errorf("pod-level resources = %+v", got)
	}
	if got := containerResources(pod, &pod.Spec.Containers[1], NodeOptions{}); got.CPUMillis != 1000 {
		t.Errorf("container without a CPU limit under a pod-level one: %+v; want the pod's limit", got)
	}
}
