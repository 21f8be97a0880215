// Package vknode runs virtual-kubelet's node and pod controllers for runlet:
// the Node object and its lease, the informer of the pods bound to the node,
// and the kubelet port. It wires what virtual-kubelet's nodeutil.NewNode
// wires; nodeutil itself imports the generic API server's options (the etcd
// client, CEL, admission plugins), which a node never runs.
package vknode

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	corev1informers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// podResync is how often the pod informer replays its cache, nodeutil's default.
const podResync = time.Minute

// statusReportFrequency is how often the Node's status is written when
// nothing in it changed: the kubelet's nodeStatusReportFrequency default.
// The lease, renewed every 10 s, tells the control plane the node lives;
// a change of the status is written at once (the NodeProvider's notify).
const statusReportFrequency = 5 * time.Minute

// Config is the node to run.
type Config struct {
	Name   string
	Client kubernetes.Interface
	// Heartbeat writes the node's lease and status; nil: Client. The
	// kubelet gives it no rate limit, so that pod writes cannot delay it.
	Heartbeat  kubernetes.Interface
	ListenAddr string
	TLSConfig  *tls.Config
	Handler    http.Handler
	// Workers is the number of pod controller workers.
	Workers       int
	EventRecorder record.EventRecorder
	// PodControllerOpts adjust the pod controller's config before it is built.
	PodControllerOpts []func(*node.PodControllerConfig) error
	// Pods is the informer of the pods bound to the node (NewPodInformer),
	// which runlet's own parts read too. Run starts it.
	Pods *PodInformer
	// Node is the Node object to register (BaseNode, filled in).
	Node *v1.Node
	// Provider runs the node's pods; NodeProvider keeps the Node's status.
	Provider     node.PodLifecycleHandler
	NodeProvider node.NodeProvider
}

// PodInformer watches the pods bound to one node.
type PodInformer struct {
	factory  *coreFactory
	informer corev1informers.PodInformer
}

// NewPodInformer returns the informer of the pods bound to node name; it
// runs once the node runs.
func NewPodInformer(client kubernetes.Interface, name string) *PodInformer {
	f := newCoreFactory(client, podResync)
	inf := corev1informers.New(f, v1.NamespaceAll, func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", name).String()
	}).Pods()
	inf.Informer() // made now, so that Start runs it
	return &PodInformer{factory: f, informer: inf}
}

// Lister lists the node's pods from the informer's cache.
func (p *PodInformer) Lister() corev1listers.PodLister { return p.informer.Lister() }

// Synced reports whether the cache has been filled once.
func (p *PodInformer) Synced() bool { return p.informer.Informer().HasSynced() }

// AddEventHandler has h told of the node's pods' changes.
func (p *PodInformer) AddEventHandler(h cache.ResourceEventHandler) error {
	_, err := p.informer.Informer().AddEventHandler(h)
	return err
}

// Node is a running virtual-kubelet node.
type Node struct {
	cfg  Config
	nc   *node.NodeController
	pc   *node.PodController
	pods *coreFactory
	// node watches the node's own Node object; it runs with the pods'.
	node  corev1informers.NodeInformer
	ready chan struct{}
	done  chan struct{}
	err   error
}

// New builds the node's controllers around the providers.
func New(cfg Config) (*Node, error) {
	if _, _, err := net.SplitHostPort(cfg.ListenAddr); err != nil {
		return nil, fmt.Errorf("kubelet listen address: %w", err)
	}
	if cfg.Client == nil || cfg.EventRecorder == nil || cfg.Pods == nil || cfg.Node == nil ||
		cfg.Provider == nil || cfg.NodeProvider == nil {
		return nil, errors.New("vknode: a client, an event recorder, a pod informer, a node and its providers are required")
	}
	podInformer := cfg.Pods.informer
	heartbeat := cfg.Heartbeat
	if heartbeat == nil {
		heartbeat = cfg.Client
	}
	nodeInformer := newNodeInformer(cfg.Pods.factory, cfg.Node.Name)
	nodes := &cachedNodes{NodeInterface: heartbeat.CoreV1().Nodes(), lister: nodeInformer.Lister(),
		synced: nodeInformer.Informer().HasSynced}
	nc, err := node.NewNodeController(cfg.NodeProvider, cfg.Node, nodes,
		node.WithNodeEnableLeaseV1(heartbeat.CoordinationV1().Leases(v1.NamespaceNodeLease), node.DefaultLeaseDuration),
		node.WithNodeStatusUpdateInterval(statusReportFrequency))
	if err != nil {
		return nil, fmt.Errorf("node controller: %w", err)
	}
	pc, err := newPodController(cfg, cfg.Provider, podInformer)
	if err != nil {
		return nil, err
	}
	return &Node{cfg: cfg, nc: nc, pc: pc, pods: cfg.Pods.factory, node: nodeInformer, ready: make(chan struct{}), done: make(chan struct{})}, nil
}

// PodController is the node's pod controller.
func (n *Node) PodController() *node.PodController { return n.pc }

// BaseNode is the Node object before runlet fills it in, as nodeutil
// starts it.
func BaseNode(name string) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name: name,
			Labels: map[string]string{
				"type":                   "virtual-kubelet",
				"kubernetes.io/hostname": name,
			},
		},
		Status: v1.NodeStatus{
			Phase: v1.NodePending,
			Conditions: []v1.NodeCondition{
				{Type: v1.NodeReady},
				{Type: v1.NodeDiskPressure},
				{Type: v1.NodeMemoryPressure},
				{Type: v1.NodePIDPressure},
				{Type: v1.NodeNetworkUnavailable},
			},
		},
	}
}
