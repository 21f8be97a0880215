package node

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Reserve takes reserved off the node's allocatable, floored at zero. The
// kubelet keeps its hard eviction thresholds (memory.available,
// nodefs.available) from pods this way, on top of --system-reserved and
// --kube-reserved: a node filled to its allocatable is not yet under
// pressure.
func Reserve(n *v1.Node, reserved v1.ResourceList) {
	for name, r := range reserved {
		q, ok := n.Status.Allocatable[name]
		if !ok {
			continue
		}
		q.Sub(r)
		if q.Sign() < 0 {
			q = *resource.NewQuantity(0, q.Format)
		}
		n.Status.Allocatable[name] = q
	}
}
