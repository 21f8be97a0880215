package kubelet

import (
	"context"
	"net"
	"strconv"

	"github.com/runlet/runlet/internal/checkpoint"
	"github.com/runlet/runlet/internal/logs"
	"github.com/runlet/runlet/internal/network/cni"
	nodeinfo "github.com/runlet/runlet/internal/node"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/syncloop"
	"github.com/runlet/runlet/internal/vknode"
	"github.com/runlet/runlet/provider"
	"github.com/sirupsen/logrus"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// NodeConfig is what the flags and the config file say of the whole node:
// the core, and the Node object, the framework and the kubelet API around it.
type NodeConfig struct {
	Config
	API APIConfig
	// PodSyncWorkers are the framework's workers that hand pods to the core.
	PodSyncWorkers int
	// KubeletVersion is the Node's nodeInfo.kubeletVersion.
	KubeletVersion string
	// Reserved is kept from pods (--system-reserved, --kube-reserved, the
	// hard eviction thresholds): the Node's allocatable is capacity minus it.
	Reserved []v1.ResourceList
	// Taints and Labels are the Node's when it registers
	// (--register-with-taints, --node-labels).
	Taints []v1.Taint
	Labels map[string]string
	// PodCIDR is --pod-cidr: the pod network's range until the Node's spec
	// has one of its own.
	PodCIDR string
	// ContainerLogMaxSize and ContainerLogMaxFiles bound each container's
	// logs (--container-log-max-size, --container-log-max-files).
	ContainerLogMaxSize  int64
	ContainerLogMaxFiles int
}

// NodeDeps are what the node is built from: the clients, the backend and
// the objects main opened or made.
type NodeDeps struct {
	Client kubernetes.Interface
	// Events is the client of events; Heartbeat that of the node's lease
	// and status, which no rate limit holds back behind the pods' writes.
	Events    corev1client.EventsGetter
	Heartbeat kubernetes.Interface
	Backend   runtime.Runtime
	Host      runtime.HostInfo
	Log       *logrus.Entry
	// Admission is the node's resource, sysctl and AppArmor admission.
	Admission syncloop.Admitter
	// Network is the pod network; nil with a remote backend.
	Network *cni.Manager
	// Existing is the Node an earlier run registered, as the API has it;
	// nil: a new node.
	Existing *v1.Node
	// Metrics is where runlet's own /metrics and /healthz are served; nil:
	// nowhere. main opens it, so that a port in use fails before anything
	// starts.
	Metrics net.Listener
}

// RunNode builds the whole node, as the kubelet's RunKubelet does, and runs
// it until ctx ends: the core (New), its containers' log rotation, the Node
// object and virtual-kubelet's controllers around the provider, the kubelet
// API. It returns nil once ctx ends, else why the node could not run.
func RunNode(ctx context.Context, cfg NodeConfig, d NodeDeps) error {
	rec, stopEvents := vknode.NewEventRecorder(d.Events, vknode.EventComponent, cfg.NodeName)
	defer stopEvents()
	n, err := buildNode(ctx, cfg, d, rec)
	if err != nil {
		return err
	}
	return n.run(ctx)
}

// builtNode is the node, built and not yet running.
type builtNode struct {
	cfg        NodeConfig
	d          NodeDeps
	core       *Kubelet
	rotation   *logs.Manager
	nodeStatus *nodeinfo.Provider
	vk         *vknode.Node
	// shutdownSock is `runlet shutdown`'s socket; nil: none.
	shutdownSock net.Listener
}

func buildNode(ctx context.Context, cfg NodeConfig, d NodeDeps, rec record.EventRecorder) (*builtNode, error) {
	cp, err := openCheckpoint(cfg.Config, d.Log)
	if err != nil {
		return nil, err
	}
	existing := d.Existing
	if existing == nil && cp != nil {
		existing = cp.Node() // the API did not answer: the node as it last showed it
	}
	// Before nodeObject, which asks the network whether it is ready.
	seedPodCIDRs(existing, d.Network)
	registered, err := nodeObject(cfg, d.Host, d.Network)
	if err != nil {
		return nil, err
	}
	pods := vknode.NewPodInformer(d.Client, cfg.NodeName)
	core, err := New(ctx, cfg.Config, d.core(rec, withLabelsOf(registered, existing), pods, cp))
	if err != nil {
		return nil, err
	}
	rotation, err := logs.New(logs.Config{Backend: d.Backend, Running: core.RunningContainers,
		MaxSize: cfg.ContainerLogMaxSize, MaxFiles: cfg.ContainerLogMaxFiles, Log: d.Log.WithField("component", "logs")})
	if err != nil {
		return nil, err
	}
	// Ready as the kubelet's: the runtime, the network, then node shutdown.
	health := []nodeinfo.HealthCheck{core.PLEGHealth, networkHealth(d.Network), core.Shutdown().ShutdownStatus}
	n := &builtNode{cfg: cfg, d: d, core: core, rotation: rotation,
		nodeStatus: nodeinfo.NewProvider(d.Backend, registered, health...).WithPressure(core.Pressure, rec)}
	if n.shutdownSock, err = listenShutdown(cfg.RootDir, core.Shutdown(), d.Log); err != nil {
		return nil, err
	}
	if err = n.wireVirtualNode(ctx, rec, registered, pods); err != nil && n.shutdownSock != nil {
		n.shutdownSock.Close()
	}
	return n, err
}

// wireVirtualNode builds virtual-kubelet's node, and hands the node's own
// watch of its Node to the node status and the pod network.
func (n *builtNode) wireVirtualNode(ctx context.Context, rec record.EventRecorder, registered *v1.Node, pods *vknode.PodInformer) error {
	var err error
	if n.vk, err = n.virtualNode(ctx, rec, registered, pods); err != nil {
		return err
	}
	if err := n.vk.AddNodeEventHandler(n.nodeStatus.APIHandler()); err != nil {
		return err
	}
	if seen := n.core.keepNode(); seen != nil {
		if err := n.vk.AddNodeEventHandler(nodeSeenHandler(seen)); err != nil {
			return err
		}
	}
	if n.d.Network == nil {
		return nil
	}
	return n.vk.AddNodeEventHandler(podCIDRHandler(n.d.Network, n.cfg.PodCIDR, n.nodeStatus.Refresh))
}

// virtualNode is virtual-kubelet's node around the core: the provider
// hands it the framework's pods, the node's status comes from nodeStatus,
// and it serves the kubelet API.
func (n *builtNode) virtualNode(ctx context.Context, rec record.EventRecorder, registered *v1.Node, pods *vknode.PodInformer) (*vknode.Node, error) {
	cfg, d, core := n.cfg, n.d, n.core
	tlsCfg, handler, err := kubeletAPI(ctx, cfg, d, core, pods)
	if err != nil {
		return nil, err
	}
	prov := provider.New(provider.Config{Source: core.Source(), Status: core.Status()})
	return vknode.New(vknode.Config{
		Name: cfg.NodeName, Client: d.Client, Heartbeat: d.Heartbeat, EventRecorder: rec, Workers: cfg.PodSyncWorkers, Pods: pods,
		ListenAddr: net.JoinHostPort(cfg.API.Address, strconv.Itoa(int(cfg.API.Port))), TLSConfig: tlsCfg, Handler: handler,
		PodControllerOpts: []func(*node.PodControllerConfig) error{vknode.RaiseQueueLimits},
		Node:              registered, Provider: prov, NodeProvider: n.nodeStatus,
	})
}

// core are the core's deps: d, with the node's recorder, Node, pods and
// checkpoint.
func (d NodeDeps) core(rec record.EventRecorder, node *v1.Node, pods *vknode.PodInformer, cp *checkpoint.Store) Deps {
	return Deps{
		Client: d.Client, Events: d.Events, Backend: d.Backend, Host: d.Host, Recorder: rec, Log: d.Log,
		Admission: d.Admission, Network: d.Network, Node: node, Pods: pods, Checkpoint: cp,
	}
}

// run starts the core and the node's loops, then the framework's node,
// which returns when ctx ends or a controller fails.
func (n *builtNode) run(ctx context.Context) error {
	d, log := n.d, n.d.Log
	go n.rotation.Run(ctx)
	if d.Metrics != nil {
		go serveMetrics(ctx, d.Metrics, healthChecks(d.Client, d.Backend, n.core), log)
	}
	n.core.Start(ctx)
	runShutdown(ctx, n.core.Shutdown(), n.shutdownSock, n.nodeStatus, log)
	go func() {
		if err := n.vk.WaitReady(ctx); err == nil {
			log.WithField("node", n.cfg.NodeName).Info("node registered and ready")
		}
	}()
	err := n.vk.Run(ctx)
	if ctx.Err() != nil {
		return nil
	}
	return err
}
