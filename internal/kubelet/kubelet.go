// Package kubelet is runlet's composition root, as the kubelet's
// NewMainKubelet: New builds the core between the framework and the
// backend (pod config and its sources, PLEG, status manager, mirror pods,
// volumes, prober, runtime manager, sync loop, stats, eviction) in
// dependency order from one Config and one Deps; Start runs it. RunNode,
// as the kubelet's RunKubelet, builds and runs the whole node around the
// core: the Node object, virtual-kubelet's controllers, the kubelet API.
package kubelet

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/runlet/runlet/internal/allocation"
	"github.com/runlet/runlet/internal/apisource"
	"github.com/runlet/runlet/internal/checkpoint"
	"github.com/runlet/runlet/internal/envvars"
	"github.com/runlet/runlet/internal/eviction"
	"github.com/runlet/runlet/internal/kuberuntime"
	"github.com/runlet/runlet/internal/lifecycle"
	"github.com/runlet/runlet/internal/mirror"
	"github.com/runlet/runlet/internal/network/cni"
	"github.com/runlet/runlet/internal/nodeshutdown"
	"github.com/runlet/runlet/internal/pleg"
	"github.com/runlet/runlet/internal/podconfig"
	"github.com/runlet/runlet/internal/poddir"
	"github.com/runlet/runlet/internal/prober"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/stats"
	"github.com/runlet/runlet/internal/status"
	"github.com/runlet/runlet/internal/syncloop"
	"github.com/runlet/runlet/internal/volume"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
)

// Config is what the flags and the config file say of the core.
type Config struct {
	NodeName string
	NodeIP   string
	RootDir  string
	MaxPods  int
	// PLEGRelistPeriod is how often the PLEG relists the backend.
	PLEGRelistPeriod time.Duration
	ImagePullTimeout time.Duration
	// ClusterDNS, ClusterDomain and ResolvConf are the kubelet's pod DNS flags.
	ClusterDNS    []net.IP
	ClusterDomain string
	ResolvConf    string
	// EvictionThresholds and EvictionPressureTransitionPeriod are node pressure's.
	EvictionThresholds               []eviction.Threshold
	EvictionPressureTransitionPeriod time.Duration
	// Runtime are the node-wide settings of containers' configs.
	Runtime kuberuntime.NodeOptions
	// Allocatable is what pods may use: the downward API's default limits.
	Allocatable v1.ResourceList
	// PodManifestPath, ManifestURL and ManifestHeader are the static pod
	// sources (--pod-manifest-path, --manifest-url, --manifest-url-header).
	PodManifestPath string
	ManifestURL     string
	ManifestHeader  http.Header
	// ShutdownGracePeriods are the node shutdown's priority groups
	// (shutdownGracePeriod, shutdownGracePeriodCriticalPods or
	// shutdownGracePeriodByPodPriority); none: graceful node shutdown off.
	ShutdownGracePeriods []nodeshutdown.ByPodPriority
	// OfflineStartAfter is how long after Started runlet runs the pods of
	// its checkpoint if the apiserver has not listed the node's pods by
	// then (--offline-start-after); Deps.Checkpoint keeps them.
	OfflineStartAfter time.Duration
	// Started is when runlet started; zero: when New runs.
	Started time.Time
}

// Deps are what the core is built from: clients, the backend and the
// objects main opened or made.
type Deps struct {
	Client kubernetes.Interface
	// Events is the client of events (the static sources' own recorder).
	Events   corev1client.EventsGetter
	Backend  runtime.Runtime
	Host     runtime.HostInfo
	Recorder record.EventRecorder
	Log      *logrus.Entry
	// Admission is the node's resource, sysctl and AppArmor admission.
	Admission syncloop.Admitter
	// Network is the pod network; nil with a remote backend.
	Network *cni.Manager
	// Node is the node pods are admitted against first: the Node object
	// runlet registers, with the labels the API last showed.
	Node *v1.Node
	// Pods watches the pods bound to the node: the api source, the status
	// manager, the mirror manager and the orphan check all read it.
	Pods apisource.Informer
	// Checkpoint, if set, keeps the node's API pods, their statuses and the
	// objects they use, and serves them when runlet starts offline.
	Checkpoint *checkpoint.Store
}

// Kubelet is the kubelet core between the framework and the backend.
type Kubelet struct {
	config  *podconfig.Config
	source  *apisource.Source
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
	shutdown        *nodeshutdown.Manager
	pods            apisource.Informer
	objects         podObjects
	volumes         *volume.Manager
	prober          *prober.Manager
	// node is what admission checks pods against.
	node *admitNode
	// checkpoint keeps the node's API pods for an offline start; nil: none.
	checkpoint *checkpoint.Store
}

// New builds the core in dependency order; nothing runs before Start.
func New(ctx context.Context, cfg Config, d Deps) (*Kubelet, error) {
	client, rt, host, log := d.Client, d.Backend, d.Host, d.Log
	// The status manager alone writes pods' statuses to the API: API pods',
	// static pods' to their mirror pods, and the final status before the
	// delete of a pod that terminated; it resyncs them with the API.
	target := status.Target(apiPodOf(d.Pods), mirrorOf(d.Pods))
	sm := status.NewManager(status.Config{Writer: status.APIWriter{Pods: client.CoreV1(), Current: target, Synced: d.Pods.Synced},
		APIPods: target, Written: checkpointStatus(d.Checkpoint), Log: log.WithField("component", "status")})
	mirrors := mirror.New(mirror.Config{Client: client, NodeName: cfg.NodeName, Log: log.WithField("component", "mirror"),
		Pods: d.Pods.Lister(), Synced: d.Pods.Synced, Created: func(static *v1.Pod) { sm.Requeue(static.UID) }})
	rec := mirror.NewRecorder(d.Recorder, mirrors) // static pods' events land on their mirror pods
	k := &Kubelet{config: podconfig.New(ctx, rec), cache: pleg.NewCache(), status: sm, backend: rt, mirror: mirrors,
		pods: d.Pods, node: newAdmitNode(client, d.Node), checkpoint: d.Checkpoint}
	k.pleg = pleg.New(rt, k.cache, cfg.PLEGRelistPeriod, log.WithField("component", "pleg"))
	k.objects = newPodObjects(ctx, client, d.Checkpoint)
	k.volumes = newVolumes(ctx, cfg, d, k.objects, rec)
	k.prober = prober.NewManager(prober.Config{Exec: rt, Status: k.status, Recorder: rec, Log: log.WithField("component", "prober")})
	alloc, err := allocation.New(cfg.RootDir)
	if err != nil {
		log.WithError(err).Warn("resource allocations unreadable")
	}
	k.runtime = newRuntimeManager(cfg, d, k, rec, alloc)
	k.stats = newStats(cfg, k, host, rt)
	// The loop takes the admit handlers, and the handlers of eviction and
	// node shutdown and their kills need the loop: they reach it through loop, bound right after
	// the loop is built and before anything runs.
	loop := &loopRef{}
	k.eviction = newEvictionManager(ctx, cfg, k, loop, rec, log)
	k.shutdown = newShutdownManager(cfg, k, loop, rec, log)
	k.loop = syncloop.New(syncloop.Config{
		Updates:      k.config.Updates(),
		SourcesSeen:  k.config.SeenAllSources,
		PLEG:         k.pleg,
		Cache:        k.cache,
		Runtime:      k.runtime,
		Status:       k.status,
		Recorder:     rec,
		HostIPs:      []string{cfg.NodeIP},
		MaxPods:      cfg.MaxPods,
		Admission:    d.Admission,
		Allocation:   alloc,
		Log:          log.WithField("component", "syncloop"),
		Mirror:       k.mirror,
		InAPI:        k.inAPI,
		Volumes:      k.volumes,
		Admit:        admitAll(k.admitHandlers(loop)),
		Prober:       k.prober,
		ProbeResults: k.prober.Updates(),
	})
	loop.bind(k.loop)
	if err := k.startSources(ctx, cfg, d); err != nil {
		return nil, err
	}
	return k, nil
}

// newRuntimeManager is the kuberuntime manager: the pods' containers on the
// backend, with their volumes, DNS, network, hooks and probes.
func newRuntimeManager(cfg Config, d Deps, k *Kubelet, rec record.EventRecorder, alloc *allocation.Manager) *kuberuntime.Manager {
	rt, log := d.Backend, d.Log
	objs := k.objects.apiObjects() // one watch each serves env, volumes and pull secrets
	mgr := kuberuntime.NewManager(kuberuntime.Config{
		UserNamespaces: newUserNamespaces(cfg, log),
		Runtime:        rt, Recorder: rec, RuntimeName: d.Host.RuntimeName, Owner: cfg.NodeName,
		Dirs: poddir.New(cfg.RootDir), Volumes: k.volumes, Log: log.WithField("component", "kuberuntime"),
		DNS: newDNSConfigurer(cfg, rec, cfg.NodeIP, log), ImagePullTimeout: cfg.ImagePullTimeout,
		Liveness: k.prober.Liveness, Startup: k.prober.Startup,
		Hooks:       lifecycle.NewRunner(rt, rec, log.WithField("component", "lifecycle")),
		Node:        cfg.Runtime,
		Network:     podNetworkOf(d.Network),
		Resources:   alloc,
		Env:         envvars.NewResolver(objs),
		HostIPs:     []string{cfg.NodeIP},
		PullSecrets: objs,
	})
	if err := mgr.PersistBackoff(filepath.Join(cfg.RootDir, "backoff.json")); err != nil {
		log.WithError(err).Warn("restart back-off state unreadable; starting afresh")
	}
	return mgr
}

// podNetworkOf is the kuberuntime's view of the network; nil stays nil.
func podNetworkOf(m *cni.Manager) kuberuntime.PodNetwork {
	if m == nil {
		return nil
	}
	return m
}

// Start runs the core's loops until ctx ends, the api source last.
func (k *Kubelet) Start(ctx context.Context) {
	go k.status.Run(ctx)
	go k.mirror.Run(ctx)
	go k.pleg.Run(ctx)
	go k.prober.Run(ctx)
	go k.loop.Run(ctx)
	k.eviction.Start(ctx, eviction.MonitoringInterval)
	if k.checkpoint != nil {
		go k.checkpoint.Run(ctx)
	}
	go k.source.Run(ctx)
}
