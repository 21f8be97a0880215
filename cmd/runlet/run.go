package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/runlet/runlet/internal/kubelet"
	"github.com/runlet/runlet/internal/kubeletconfig"
	"github.com/runlet/runlet/internal/kubeletserver"
	"github.com/runlet/runlet/internal/logs"
	"github.com/runlet/runlet/internal/network/cni"
	nodeinfo "github.com/runlet/runlet/internal/node"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/streaming"
	"github.com/runlet/runlet/internal/syncloop"
	"github.com/runlet/runlet/internal/telemetry"
	"github.com/runlet/runlet/internal/vknode"
	"github.com/runlet/runlet/provider"
	"github.com/sirupsen/logrus"
	vklog "github.com/virtual-kubelet/virtual-kubelet/log"
	vklogrus "github.com/virtual-kubelet/virtual-kubelet/log/logrus"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// run wires runlet together and blocks until ctx ends.
func run(ctx context.Context, o *options, log *logrus.Entry) error {
	vklog.L = vklogrus.FromLogrus(log)
	ctx = vklog.WithLogger(ctx, vklog.L)
	nodeIP, err := resolveNodeIP(o.NodeIP)
	if err != nil {
		return err
	}
	metricsListener, err := listenEarly(o)
	if err != nil {
		return err
	}
	if metricsListener != nil {
		defer metricsListener.Close()
	}
	clients, err := newClients(ctx, o, log)
	if err != nil {
		return err
	}
	client := clients.kube
	ownNode, err := checkNodeName(ctx, client.CoreV1().Nodes(), o.NodeName)
	if err != nil {
		return err
	}
	shutdownTracing, err := telemetry.SetupTracing(ctx, o.NodeName, version)
	if err != nil {
		return fmt.Errorf("tracing: %w", err)
	}
	defer func() { _ = shutdownTracing(context.Background()) }()

	backend, err := openBackend(ctx, o, log)
	if err != nil {
		return err
	}
	defer backend.Close()
	host, err := backend.Info(ctx)
	if err != nil {
		return fmt.Errorf("%s info: %w", o.Runtime, err)
	}
	log.WithFields(logrus.Fields{"runtime": host.RuntimeName + " " + host.RuntimeVersion, "oci": host.OCIRuntime,
		"cgroup": host.CgroupVersion}).Info("container backend ready")
	for _, l := range backend.Capabilities().Limitations {
		log.WithField("backend", o.Runtime).Warn(l)
	}

	res, err := newNodeResources(o, log)
	if err != nil {
		return err
	}
	admit, err := res.admitter(o, host)
	if err != nil {
		return err
	}
	podNet, err := newPodNetwork(o, host, log)
	if err != nil {
		return fmt.Errorf("pod network: %w", err)
	}
	seedPodCIDRs(ownNode, podNet)
	registered, err := nodeObject(o, host, nodeIP, res, podNet)
	if err != nil {
		return err
	}
	recorder, stopEvents := vknode.NewEventRecorder(clients.events, vknode.EventComponent, o.NodeName)
	defer stopEvents()
	d := coreDeps{client: client, events: clients.events, heartbeat: clients.heartbeat, backend: backend, host: host, recorder: recorder, nodeIP: nodeIP, log: log,
		res: res, admit: admit, network: podNet, node: registered, pods: vknode.NewPodInformer(client, o.NodeName)}
	core, err := kubelet.New(ctx, coreConfig(o, nodeIP, res), d.kubeletDeps())
	if err != nil {
		return err
	}

	rotation, err := logs.New(logs.Config{Backend: backend, Running: core.RunningContainers,
		MaxSize: o.ContainerLogMaxSize, MaxFiles: o.ContainerLogMaxFiles, Log: log.WithField("component", "logs")})
	if err != nil {
		return err
	}
	go rotation.Run(ctx)
	if metricsListener != nil {
		go serveMetrics(ctx, metricsListener, healthChecks(client, backend, core), log)
	}
	return runNode(ctx, o, core, d)
}

// coreDeps is what the core and the node are built from, in this order.
type coreDeps struct {
	client kubernetes.Interface
	// events and heartbeat are the clients of events and of the node's
	// lease and status (newClients).
	events    corev1client.EventsGetter
	heartbeat kubernetes.Interface
	backend   runtime.Runtime
	host      runtime.HostInfo
	recorder  record.EventRecorder
	nodeIP    string
	log       *logrus.Entry
	res       nodeResources
	admit     syncloop.Admitter
	// network is the pod network; nil with a remote backend.
	network *cni.Manager
	// node is the Node object runlet registers.
	node *v1.Node
	// pods watches the pods bound to the node: the framework's pod
	// controller, the api source, the status manager, the mirror manager
	// and the orphan check all read it.
	pods *vknode.PodInformer
}

// nodeObject is the Node object runlet registers, as the host and the
// flags describe it.
func nodeObject(o *options, host runtime.HostInfo, nodeIP string, res nodeResources, podNet *cni.Manager) (*v1.Node, error) {
	n := vknode.BaseNode(o.NodeName)
	err := nodeinfo.Fill(n, nodeinfo.Options{
		Name: o.NodeName, InternalIP: nodeIP, KubeletPort: o.KubeletPort, MaxPods: o.MaxPods,
		StoragePath: kubelet.StoragePath(o.RootDir), Version: kubeletVersion(), Host: host,
		Reserved: res.reserved,
		Taints:   o.RegisterWithTaints, Labels: o.NodeLabels, PodCIDR: o.PodCIDR,
		NotReady: networkHealth(podNet)(),
	})
	return n, err
}

func runNode(ctx context.Context, o *options, c *kubelet.Kubelet, d coreDeps) error {
	client, nodeIP, rec, log := d.client, d.nodeIP, d.recorder, d.log
	prov := provider.New(provider.Config{Source: c.Source(), Status: c.Status()})
	np := nodeinfo.NewProvider(d.backend, d.node, c.PLEGHealth, networkHealth(d.network)).WithPressure(c.Pressure, rec)
	go watchPodCIDRs(ctx, client, o.NodeName, d.network, o.PodCIDR, np.Refresh)
	tlsCfg, err := kubeletTLS(ctx, o, client, nodeIP, log)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	handler, err := kubeletAuth(ctx, o, client, mux, log)
	if err != nil {
		return err
	}
	n, err := vknode.New(vknode.Config{
		Name: o.NodeName, Client: client, Heartbeat: d.heartbeat, EventRecorder: rec, Workers: o.PodSyncWorkers, Pods: d.pods,
		ListenAddr: net.JoinHostPort(o.Address, strconv.Itoa(int(o.KubeletPort))), TLSConfig: tlsCfg, Handler: handler,
		PodControllerOpts: []func(*node.PodControllerConfig) error{vknode.RaiseQueueLimits},
		Node:              d.node, Provider: prov, NodeProvider: np,
	})
	if err != nil {
		return err
	}
	// runlet's own metrics, as the kubelet serves its /metrics on its
	// authenticated port (nodes/metrics); --metrics-addr is the loopback copy.
	mux.Handle("/metrics", promhttp.Handler())
	configz, err := kubeletconfig.Handler(effectiveConfig(o))
	if err != nil {
		return err
	}
	mux.Handle("/configz", configz)
	streams := streaming.New(streaming.Config{Pods: c, Static: c.Mirror(), Backend: c, Runtime: d.backend, Stats: c.Stats()})
	mux.Handle("/", kubeletserver.Routes(streams, c.RunningPods, d.pods.Lister()))
	c.Start(ctx)
	go func() {
		if err := n.WaitReady(ctx); err == nil {
			log.WithField("node", o.NodeName).Info("node registered and ready")
		}
	}()
	err = n.Run(ctx)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// kubeletVersion is the kubelet API level runlet follows, tagged with its own version.
func kubeletVersion() string { return "v1.37.2-runlet-" + strings.TrimPrefix(version, "v") }

// coreConfig is the core's config from the flags and the config file.
func coreConfig(o *options, nodeIP string, res nodeResources) kubelet.Config {
	return kubelet.Config{
		NodeName: o.NodeName, NodeIP: nodeIP, RootDir: o.RootDir, MaxPods: o.MaxPods,
		PLEGRelistPeriod: o.PLEGRelistPeriod, ImagePullTimeout: o.ImagePullTimeout,
		ClusterDNS: o.ClusterDNS, ClusterDomain: o.ClusterDomain, ResolvConf: o.ResolvConf,
		EvictionThresholds: o.evictionThresholds, EvictionPressureTransitionPeriod: o.EvictionPressureTransitionPeriod,
		Runtime: res.runtimeOptions(o), Allocatable: res.allocatable,
		PodManifestPath: o.PodManifestPath, ManifestURL: o.ManifestURL, ManifestHeader: o.manifestHeader,
	}
}

// kubeletDeps are what the core takes of d.
func (d coreDeps) kubeletDeps() kubelet.Deps {
	return kubelet.Deps{
		Client: d.client, Events: d.events, Backend: d.backend, Host: d.host, Recorder: d.recorder, Log: d.log,
		Admission: d.admit, Network: d.network, Node: d.node, Pods: d.pods,
	}
}
