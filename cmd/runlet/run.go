package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/runlet/runlet/internal/allocation"
	"github.com/runlet/runlet/internal/apisource"
	"github.com/runlet/runlet/internal/envvars"
	"github.com/runlet/runlet/internal/eviction"
	"github.com/runlet/runlet/internal/kubeletconfig"
	"github.com/runlet/runlet/internal/kubeletserver"
	"github.com/runlet/runlet/internal/kuberuntime"
	"github.com/runlet/runlet/internal/lifecycle"
	"github.com/runlet/runlet/internal/logs"
	"github.com/runlet/runlet/internal/mirror"
	"github.com/runlet/runlet/internal/network/cni"
	nodeinfo "github.com/runlet/runlet/internal/node"
	"github.com/runlet/runlet/internal/pleg"
	"github.com/runlet/runlet/internal/podconfig"
	"github.com/runlet/runlet/internal/poddir"
	"github.com/runlet/runlet/internal/prober"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/stats"
	"github.com/runlet/runlet/internal/status"
	"github.com/runlet/runlet/internal/streaming"
	"github.com/runlet/runlet/internal/syncloop"
	"github.com/runlet/runlet/internal/telemetry"
	"github.com/runlet/runlet/internal/userns"
	"github.com/runlet/runlet/internal/vknode"
	"github.com/runlet/runlet/internal/volume"
	"github.com/runlet/runlet/provider"
	"github.com/sirupsen/logrus"
	vklog "github.com/virtual-kubelet/virtual-kubelet/log"
	vklogrus "github.com/virtual-kubelet/virtual-kubelet/log/logrus"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
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
	core := newCore(ctx, o, d)

	rotation, err := logs.New(logs.Config{Backend: backend, Running: core.runningContainers,
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
		StoragePath: storagePath(o.RootDir), Version: kubeletVersion(), Host: host,
		Reserved: res.reserved,
		Taints:   o.RegisterWithTaints, Labels: o.NodeLabels, PodCIDR: o.PodCIDR,
		NotReady: networkHealth(podNet)(),
	})
	return n, err
}

// core is the kubelet core between the framework and the backend.
type core struct {
	config  *podconfig.Config
	cache   *pleg.Cache
	pleg    *pleg.PLEG
	status  *status.Manager
	loop    *syncloop.Loop
	backend runtime.Runtime
	runtime *kuberuntime.Manager
	mirror  *mirror.Manager
	// stats is the node's summary; eviction reads it for node pressure.
	stats           *stats.Collector
	nodeFs, imageFs string
	eviction        *eviction.Manager
	pods            *vknode.PodInformer
	objects         podObjects
	volumes         *volume.Manager
	prober          *prober.Manager
	// node is what admission checks pods against.
	node *admitNode
	// network is the pod network; nil with a remote backend.
	network *cni.Manager
}

// newUserNamespaces allots the ranges of pods with hostUsers: false, from
// the kubelet user's subordinate IDs where the host configures them; with
// none (those IDs or the pod directories unreadable) such pods are refused.
func newUserNamespaces(o *options, log logrus.FieldLogger) kuberuntime.UserNamespaces {
	ids, err := userns.NodeHostIDs(o.MaxPods)
	if err != nil {
		log.WithError(err).Warn("the kubelet user's subordinate IDs: pods with hostUsers: false are refused")
		return nil
	}
	m, err := userns.New(poddir.New(o.RootDir), ids)
	if err != nil {
		log.WithError(err).Warn("user namespace ranges of pods on disk unreadable")
	}
	if m == nil {
		return nil
	}
	return m
}

func newCore(ctx context.Context, o *options, d coreDeps) *core {
	client, rt, host, log, res := d.client, d.backend, d.host, d.log, d.res
	mirrors := mirror.New(mirror.Config{Client: client, NodeName: o.NodeName, Log: log.WithField("component", "mirror"),
		Pods: d.pods.Lister(), Synced: d.pods.Synced})
	rec := mirror.NewRecorder(d.recorder, mirrors) // static pods' events land on their mirror pods
	// The status manager alone writes pods' statuses to the API: through
	// the framework, or itself where the framework does not (the final
	// delete of a pod that terminated, statuses of terminal pods); it
	// resyncs them with the API on its own.
	sm := status.NewManager(status.Config{Writer: status.APIWriter{Pods: client.CoreV1(), Current: apiPodOf(d.pods)},
		APIPods: apiPodOf(d.pods), Log: log.WithField("component", "status")})
	c := &core{config: podconfig.New(ctx, rec), cache: pleg.NewCache(), status: sm, backend: rt, mirror: mirrors,
		network: d.network, pods: d.pods, node: newAdmitNode(client, d.node)}
	c.pleg = pleg.New(rt, c.cache, o.PLEGRelistPeriod, log.WithField("component", "pleg"))
	c.objects = newPodObjects(ctx, client)
	c.volumes = newVolumes(ctx, o, d, c.objects, rec)
	c.prober = prober.NewManager(prober.Config{Exec: rt, Status: c.status, Recorder: rec, Log: log.WithField("component", "prober")})
	alloc, err := allocation.New(o.RootDir)
	if err != nil {
		log.WithError(err).Warn("resource allocations unreadable")
	}
	objs := c.objects.apiObjects() // one watch each serves env, volumes and pull secrets
	mgr := kuberuntime.NewManager(kuberuntime.Config{
		UserNamespaces: newUserNamespaces(o, log),
		Runtime:        rt, Recorder: rec, RuntimeName: host.RuntimeName, Owner: o.NodeName,
		Dirs: poddir.New(o.RootDir), Volumes: c.volumes, Log: log.WithField("component", "kuberuntime"),
		DNS: newDNSConfigurer(o, rec, d.nodeIP, log), ImagePullTimeout: o.ImagePullTimeout,
		Liveness: c.prober.Liveness, Startup: c.prober.Startup,
		Hooks:       lifecycle.NewRunner(rt, rec, log.WithField("component", "lifecycle")),
		Node:        res.runtimeOptions(o),
		Network:     podNetworkOf(d.network),
		Resources:   alloc,
		Env:         envvars.NewResolver(objs),
		HostIPs:     []string{d.nodeIP},
		PullSecrets: objs,
	})
	c.runtime = mgr
	if err := mgr.PersistBackoff(filepath.Join(o.RootDir, "backoff.json")); err != nil {
		log.WithError(err).Warn("restart back-off state unreadable; starting afresh")
	}
	c.loop = syncloop.New(syncloop.Config{
		Updates:      c.config.Updates(),
		SourcesSeen:  c.config.SeenAllSources,
		PLEG:         c.pleg,
		Cache:        c.cache,
		Runtime:      mgr,
		Status:       c.status,
		Recorder:     rec,
		HostIPs:      []string{d.nodeIP},
		MaxPods:      o.MaxPods,
		Admission:    d.admit,
		Allocation:   alloc,
		Log:          log.WithField("component", "syncloop"),
		Mirror:       c.mirror,
		InAPI:        c.inAPI,
		Volumes:      c.volumes,
		Admit:        c.admit,
		Prober:       c.prober,
		ProbeResults: c.prober.Updates(),
	})
	c.stats = newStats(o, c, host, rt)
	c.eviction = newEvictionManager(ctx, o, c, rec, log)
	return c
}

// inAPI reports a pod the API holds for the node; before the node's pods
// are known, nothing counts as an orphan's yet either.
func (c *core) inAPI(uid types.UID) bool {
	if !c.pods.Synced() {
		return true
	}
	pods, err := c.pods.Lister().List(labels.Everything())
	if err != nil {
		return true
	}
	for _, p := range pods {
		if p.UID == uid {
			return true
		}
	}
	return false
}

// apiPodOf finds the API's version of a pod (the same UID) in the node's
// pod informer.
func apiPodOf(pods *vknode.PodInformer) status.APIPod {
	return func(pod *v1.Pod) (*v1.Pod, bool) {
		cur, err := pods.Lister().Pods(pod.Namespace).Get(pod.Name)
		return cur, err == nil && cur.UID == pod.UID
	}
}

func (c *core) start(ctx context.Context) {
	go c.status.Run(ctx)
	go c.mirror.Run(ctx)
	go c.pleg.Run(ctx)
	go c.prober.Run(ctx)
	go c.loop.Run(ctx)
	c.eviction.Start(ctx, eviction.MonitoringInterval)
}

// runningContainers lists the containers that run now, from the PLEG's view.
func (c *core) runningContainers() []string {
	var out []string
	for _, uid := range c.cache.UIDs() {
		for _, ctr := range c.cache.Get(uid).Containers {
			if ctr.State == runtime.ContainerRunning {
				out = append(out, ctr.ID)
			}
		}
	}
	return out
}

// RuntimeStatus is the newest backend view of a pod, for the kubelet API.
func (c *core) RuntimeStatus(uid types.UID) *runtime.PodStatus { return c.cache.Get(string(uid)) }

func runNode(ctx context.Context, o *options, c *core, d coreDeps) error {
	client, nodeIP, rec, log := d.client, d.nodeIP, d.recorder, d.log
	// The api source is registered first: podconfig has seen all sources
	// only once it has heard from this one too.
	src, err := apisource.New(apisource.Config{Updates: c.config.Channel(podconfig.APISource), Pods: d.pods})
	if err != nil {
		return err
	}
	if err := startStaticSources(ctx, o, c.config, d.events, log); err != nil {
		return err
	}
	prov := provider.New(provider.Config{Source: src, Status: c.status, Log: log.WithField("component", "provider"), Static: c.mirror})
	np := nodeinfo.NewProvider(c.backend, d.node, plegHealth(c.pleg), networkHealth(c.network)).WithPressure(c.eviction.Pressure, rec)
	go watchPodCIDRs(ctx, client, o.NodeName, c.network, o.PodCIDR, np.Refresh)
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
	streams := streaming.New(streaming.Config{Pods: prov, Static: c.mirror, Backend: c, Runtime: c.backend, Stats: c.stats})
	mux.Handle("/", kubeletserver.Routes(streams, prov.GetPods, d.pods.Lister()))
	c.start(ctx)
	go src.Run(ctx)
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

func storagePath(rootDir string) string {
	for _, p := range []string{rootDir, "/var/lib/containers", "/"} {
		if p != "" && dirExists(p) {
			return p
		}
	}
	return "/"
}

// kubeletVersion is the kubelet API level runlet follows, tagged with its own version.
func kubeletVersion() string { return "v1.37.2-runlet-" + strings.TrimPrefix(version, "v") }
