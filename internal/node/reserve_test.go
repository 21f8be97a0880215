package node

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func TestReserve(t *testing.T) {
	q := resource.MustParse
	n := &v1.Node{}
	n.Status.Capacity = v1.ResourceList{v1.ResourceMemory: q("4Gi"), v1.ResourceEphemeralStorage: q("1Gi"), v1.ResourcePods: q("110")}
	n.Status.Allocatable = n.Status.Capacity.DeepCopy()
	Reserve(n, v1.ResourceList{v1.ResourceMemory: q("100Mi"), v1.ResourceEphemeralStorage: q("2Gi"), v1.ResourceCPU: q("1")})
	if m := n.Status.Allocatable[v1.ResourceMemory]; m.Cmp(q("3996Mi")) != 0 {
		t.Errorf("memory %s; want 4Gi - 100Mi", m.String())
	}
	if s := n.Status.Allocatable[v1.ResourceEphemeralStorage]; s.Sign() != 0 {
		t.Errorf("ephemeral-storage %s; want floored at 0", s.String())
	}
	if _, ok := n.Status.Allocatable[v1.ResourceCPU]; ok {
		t.Error("a resource the node lacks was added")
	}
	if c := n.Status.Capacity[v1.ResourceMemory]; c.Cmp(q("4Gi")) != 0 {
		t.Error("capacity changed")
	}
}
