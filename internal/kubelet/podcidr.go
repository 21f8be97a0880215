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

// watchPodCIDRs hands the network the node's spec.podCIDRs as the
// controller-manager allocates them (else --pod-cidr stays), and calls
// changed after each change.
func watchPodCIDRs(ctx context.Context, client kubernetes.Interface, name string, m *cni.Manager, fallback string, changed func()) {
	if m == nil {
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
// registered before this one started (nil: a new node, the watch sets
// them): the node's first status then says Ready, instead of NotReady until
// the watch catches up with what the node says.
func seedPodCIDRs(n *v1.Node, m *cni.Manager) {
	if m == nil || n == nil {
		return
	}
	if cidrs := nodeCIDRs(n); len(cidrs) > 0 {
		m.SetPodCIDRs(cidrs)
	}
}
