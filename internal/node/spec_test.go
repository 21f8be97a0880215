package node

import (
	"testing"

	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
)

var runletTaint = v1.Taint{Key: "virtual-kubelet.io/provider", Value: "runlet", Effect: v1.TaintEffectNoSchedule}

func TestFillAddsLabelsAndTaints(t *testing.T) {
	n := &v1.Node{}
	err := Fill(n, Options{
		Name: "edge-1", InternalIP: "10.0.0.5", KubeletPort: 10300, MaxPods: 10,
		Labels: map[string]string{"runlet.dev/instance": "edge", "zone": "z1"},
		Taints: []v1.Taint{runletTaint, {Key: "dedicated", Value: "edge", Effect: v1.TaintEffectNoExecute}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n.Labels["runlet.dev/instance"] != "edge" || n.Labels["zone"] != "z1" {
		t.Errorf("extra labels missing: %v", n.Labels)
	}
	if n.Labels["type"] != "virtual-kubelet" || n.Labels["kubernetes.io/hostname"] != "edge-1" {
		t.Errorf("runlet's own labels missing: %v", n.Labels)
	}
	if n.Annotations[RegisteredByAnnotation] != "runlet" {
		t.Errorf("annotations %v; want the node marked as runlet's", n.Annotations)
	}
	if len(n.Spec.Taints) != 2 || n.Spec.Taints[0] != runletTaint || n.Spec.Taints[1].Key != "dedicated" {
		t.Errorf("taints: %v; want those given, in order", n.Spec.Taints)
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
