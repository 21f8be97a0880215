package node

import (
	"testing"

	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
)

func TestFillAddsLabelsAndTaints(t *testing.T) {
	n := &v1.Node{}
	err := Fill(n, Options{
		Name: "edge-1", InternalIP: "10.0.0.5", KubeletPort: 10300, MaxPods: 10,
		Labels: map[string]string{"app.kubernetes.io/instance": "edge", "type": "overridden?"},
		Taints: []v1.Taint{{Key: "dedicated", Value: "edge", Effect: v1.TaintEffectNoExecute}, Taint},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n.Labels["app.kubernetes.io/instance"] != "edge" {
		t.Errorf("extra label missing: %v", n.Labels)
	}
	if n.Labels["type"] != "virtual-kubelet" || n.Labels["kubernetes.io/hostname"] != "edge-1" {
		t.Errorf("runlet's own labels must win: %v", n.Labels)
	}
	if len(n.Spec.Taints) != 2 || n.Spec.Taints[0] != Taint || n.Spec.Taints[1].Key != "dedicated" {
		t.Errorf("taints: %v; want runlet's, then the extra one once", n.Spec.Taints)
	}
	if n.Status.DaemonEndpoints.KubeletEndpoint.Port != 10300 {
		t.Errorf("kubelet port: %d", n.Status.DaemonEndpoints.KubeletEndpoint.Port)
	}
}

func TestCapacityOfARemoteBackend(t *testing.T) {
	c, err := Capacity(Options{MaxPods: 5, Host: runtime.HostInfo{Remote: true, CPUs: 64, MemoryBytes: 256 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Cpu().Value() != 64 || c.Memory().Value() != 256<<30 {
		t.Errorf("remote capacity: cpu %v memory %v; want the podman host's", c.Cpu(), c.Memory())
	}
	local, err := Capacity(Options{MaxPods: 5, Host: runtime.HostInfo{CPUs: 64, MemoryBytes: 256 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	if local.Memory().Value() == 256<<30 {
		t.Error("a local backend's capacity must come from this host")
	}
}

func TestParseTaints(t *testing.T) {
	got, err := ParseTaints([]string{"dedicated=edge:NoSchedule", "gpu:PreferNoSchedule"})
	if err != nil {
		t.Fatal(err)
	}
	want := []v1.Taint{
		{Key: "dedicated", Value: "edge", Effect: v1.TaintEffectNoSchedule},
		{Key: "gpu", Effect: v1.TaintEffectPreferNoSchedule},
	}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, bad := range [][]string{{"novalue"}, {"a=b:Never"}, {"bad key:NoSchedule"}, {"a:NoSchedule", "a=x:NoSchedule"}} {
		if _, err := ParseTaints(bad); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
