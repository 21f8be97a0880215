package vknode

import (
	"context"
	"sync"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	corev1informers "k8s.io/client-go/informers/core/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// newNodeInformer watches the node's own Node object, as the kubelet's node
// informer does: the status updates read it from there, and the pod network
// its spec.podCIDRs. It runs with the pod informer (f).
func newNodeInformer(f *coreFactory, name string) corev1informers.NodeInformer {
	inf := corev1informers.New(f, v1.NamespaceAll, func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
	}).Nodes()
	inf.Informer() // made now, so that Start runs it
	return inf
}

// AddNodeEventHandler has h told of the changes of the node's own Node
// object; call it before Run.
func (n *Node) AddNodeEventHandler(h cache.ResourceEventHandler) error {
	_, err := n.node.Informer().AddEventHandler(h)
	return err
}

// cachedNodes is the Node client of virtual-kubelet's node controller.
// virtual-kubelet reads the Node before every status patch, once a minute;
// the kubelet serves that read from its node informer (tryUpdateNodeStatus)
// and reads the API only on a retry, because in a large cluster those reads
// are most of the apiserver's load from nodes. So does this: Get answers
// from the node's own watch, unless it has not synced, does not have the
// node, or the last write failed (the retry reads what the API has).
type cachedNodes struct {
	corev1client.NodeInterface
	lister corev1listers.NodeLister
	synced func() bool

	mu sync.Mutex
	// fromAPI sends the next Get to the API: the last write failed.
	fromAPI bool
}

func (c *cachedNodes) Get(ctx context.Context, name string, opts metav1.GetOptions) (*v1.Node, error) {
	c.mu.Lock()
	fromAPI := c.fromAPI
	c.fromAPI = false
	c.mu.Unlock()
	if !fromAPI && c.synced() {
		if n, err := c.lister.Get(name); err == nil {
			return n.DeepCopy(), nil
		}
	}
	return c.NodeInterface.Get(ctx, name, opts)
}

func (c *cachedNodes) Patch(ctx context.Context, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions,
	subresources ...string) (*v1.Node, error) {
	n, err := c.NodeInterface.Patch(ctx, name, pt, data, opts, subresources...)
	c.failed(err)
	return n, err
}

func (c *cachedNodes) Create(ctx context.Context, node *v1.Node, opts metav1.CreateOptions) (*v1.Node, error) {
	n, err := c.NodeInterface.Create(ctx, node, opts)
	c.failed(err)
	return n, err
}

func (c *cachedNodes) failed(err error) {
	if err != nil {
		c.mu.Lock()
		c.fromAPI = true
		c.mu.Unlock()
	}
}
