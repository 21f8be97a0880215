package kubelet

import (
	"context"

	"github.com/runlet/runlet/internal/network/cni"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// watchNode follows the node's object in the API: it hands the network the
// node's spec.podCIDRs as the controller-manager allocates them (else
// --pod-cidr stays) and calls changed after each change, and tells seen,
// if set, of every version (the checkpoint keeps it).
func watchNode(ctx context.Context, client kubernetes.Interface, name string, m *cni.Manager, fallback string, changed func(), seen func(*v1.Node)) {
	if m == nil && seen == nil {
		return
	}
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (k8sruntime.Object, error) {
			o.FieldSelector = sel
			return client.CoreV1().Nodes().List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.FieldSelector = sel
			return client.CoreV1().Nodes().Watch(ctx, o)
		},
	}
	apply := func(obj any) {
		n, ok := obj.(*v1.Node)
		if !ok {
			return
		}
		if seen != nil {
			seen(n)
		}
		if m == nil {
			return
		}
		cidrs := nodeCIDRs(n)
		if len(cidrs) == 0 && fallback != "" {
			cidrs = []string{fallback}
		}
		m.SetPodCIDRs(cidrs)
		changed()
	}
	_, ctrl := cache.NewInformerWithOptions(cache.InformerOptions{
		ListerWatcher: lw, ObjectType: &v1.Node{},
		Handler: cache.ResourceEventHandlerFuncs{
			AddFunc:    apply,
			UpdateFunc: func(_, obj any) { apply(obj) },
		},
	})
	ctrl.RunWithContext(ctx)
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
