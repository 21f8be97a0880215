package kubelet

import (
	"github.com/runlet/runlet/internal/network/cni"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
)

// podCIDRHandler hands the network the node's spec.podCIDRs as the
// controller-manager allocates them (else --pod-cidr stays), and calls
// changed after each change. It is told of them by the node's own watch
// (vknode), which the status updates read too.
func podCIDRHandler(m *cni.Manager, fallback string, changed func()) cache.ResourceEventHandler {
	apply := func(obj any) {
		n, ok := obj.(*v1.Node)
		if !ok {
			return
		}
		cidrs := nodeCIDRs(n)
		if len(cidrs) == 0 && fallback != "" {
			cidrs = []string{fallback}
		}
		m.SetPodCIDRs(cidrs)
		changed()
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    apply,
		UpdateFunc: func(_, obj any) { apply(obj) },
	}
}

// nodeSeenHandler tells seen of every version of the Node the node's own
// watch sees: the checkpoint keeps it for an offline start.
func nodeSeenHandler(seen func(*v1.Node)) cache.ResourceEventHandler {
	apply := func(obj any) {
		if n, ok := obj.(*v1.Node); ok {
			seen(n)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    apply,
		UpdateFunc: func(_, obj any) { apply(obj) },
	}
}

// nodeCIDRs are the pod CIDRs the node's spec gives it.
func nodeCIDRs(n *v1.Node) []string {
	if len(n.Spec.PodCIDRs) > 0 || n.Spec.PodCIDR == "" {
		return n.Spec.PodCIDRs
	}
	return []string{n.Spec.PodCIDR}
}

// seedPodCIDRs hands the network the pod CIDRs of the node a runlet
// registered before this one started, as the API or else the checkpoint
// has it (nil: a new node, the watch sets them): the node's first status
// then says Ready, instead of NotReady until the watch catches up with
// what the node says, and pods that start offline get their addresses
// from the node's range.
func seedPodCIDRs(n *v1.Node, m *cni.Manager) {
	if m == nil || n == nil {
		return
	}
	if cidrs := nodeCIDRs(n); len(cidrs) > 0 {
		m.SetPodCIDRs(cidrs)
	}
}

// withLabelsOf is registered with the labels of the node as the API (or the
// checkpoint) last showed it added, registered's own winning: the node
// admission first checks pods against. Others may have labelled the node,
// and a pod that selects such a label must not be refused for it when the
// API cannot be asked.
func withLabelsOf(registered, existing *v1.Node) *v1.Node {
	out := registered.DeepCopy()
	if existing == nil {
		return out
	}
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	for k, v := range existing.Labels {
		if _, ok := out.Labels[k]; !ok {
			out.Labels[k] = v
		}
	}
	return out
}
