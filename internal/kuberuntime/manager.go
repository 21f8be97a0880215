// Package kuberuntime turns a pod's spec and the backend's view of it into
// backend actions: the kubelet's kuberuntime manager, behind runtime.Runtime.
package kuberuntime

import (
	"strings"
	"sync"
	"time"

	"github.com/runlet/runlet/internal/envvars"
	"github.com/runlet/runlet/internal/images"
	"github.com/runlet/runlet/internal/network/dns"
	"github.com/runlet/runlet/internal/poddir"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/status"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
)

// The kubelet's container restart backoff: 10 s doubling to 300 s; an entry
// untouched for twice the maximum (10 min) starts over.
const (
	backoffInitial = 10 * time.Second
	backoffMax     = 300 * time.Second
)

// Config wires a Manager.
type Config struct {
	Runtime  runtime.Runtime
	Recorder record.EventRecorder
	// RuntimeName prefixes container IDs in pod status ("podman").
	RuntimeName string
	// Owner (the node name) is stamped on every backend object created.
	Owner string
	// Dirs is where per-pod files live (volumes, etc-hosts, termination logs).
	Dirs poddir.Dirs
	// Volumes sets up pods' volumes; nil: pods get no volumes (tests).
	Volumes Volumes
	Log     logrus.FieldLogger
	// Node holds the node-wide settings of security contexts and resources.
	Node NodeOptions
	// Liveness and Startup hold the probes' results: a container that
	// failed either is killed and restarted per its policy; a sidecar with a
	// startup probe lets the next init container start once it succeeded.
	// nil: no probes (such a sidecar never counts as started).
	Liveness, Startup ProbeResults
	// Hooks runs postStart and preStop handlers; nil runs none.
	Hooks HookRunner
	// DNS decides the pods' resolv.conf (--cluster-dns, --cluster-domain,
	// --resolv-conf). nil: no cluster DNS and no host file to start from
	// (the kubelet's --resolv-conf="": nameserver 127.0.0.1).
	DNS *dns.Configurer
	// HostsFile is the node's hosts file, which host-network pods get
	// (default /etc/hosts).
	HostsFile string
	// ImagePullTimeout bounds one image pull (default images.DefaultPullTimeout).
	ImagePullTimeout time.Duration
	// Network is the pod network pods join; nil: the backend's own.
	Network PodNetwork
	// Resources records what each container was given, for in-place
	// resizes; nil: running containers keep what they started with.
	Resources ResourceRecord
	// Env resolves containers' environments from configMaps, secrets and
	// services; nil: a resolver with no API objects (tests).
	Env *envvars.Resolver
	// HostIPs are the node's addresses (status.hostIP, the pod IPs of a
	// host-network pod).
	HostIPs []string
	// PullSecrets reads pods' imagePullSecrets; nil: none are read.
	PullSecrets images.SecretGetter
	// UserNamespaces gives pods with hostUsers: false their ID mappings
	// (internal/userns); nil: such pods are refused.
	UserNamespaces UserNamespaces
}

// UserNamespaces allots pods' user namespaces.
type UserNamespaces interface {
	Mappings(podUID string) (*runtime.UserNamespace, error)
}

// Manager acts on the backend for pods.
type Manager struct {
	rt          runtime.Runtime
	caps        runtime.Capabilities
	rec         record.EventRecorder
	log         logrus.FieldLogger
	runtimeName string
	owner       string
	dirs        poddir.Dirs
	volumes     Volumes
	liveness    ProbeResults
	startup     ProbeResults
	hooks       HookRunner
	node        NodeOptions

	crashBackoff *backoff
	imageBackoff *backoff
	// starts bounds the pods being started at once (see startSlot).
	starts chan struct{}

	env     *envvars.Resolver
	hostIPs []string
	secrets images.SecretGetter
	userns  UserNamespaces

	dns        *dns.Configurer
	hostsFile  string
	network    PodNetwork
	resources  ResourceRecord
	puller     *images.Puller
	pullErrors sync.Map // image back-off key -> the last pull error, for ImagePullBackOff's message

	mu      sync.Mutex
	waiting map[string]map[string]status.Waiting // pod UID -> container -> reason
	// messages are termination messages already read: pod UID -> container ID -> message.
	messages map[string]map[string]string
	// networkGCAt is when the last pod network sweep began.
	networkGCAt time.Time
	// podCgroupTarget: pod cgroups a resize still has to settle (resize_pod.go).
	podCgroupTarget map[string]runtime.Resources
	// mountFailed: pods whose volumes failed beside their first network
	// (volumes.go's mountsFirst).
	mountFailed map[string]bool
	// mountRetries are the waits between a sync's tries of the volumes.
	mountRetries []time.Duration
	// replaced: pod UID -> the last records of containers removed with a
	// sandbox that was not ready, until their successors exist (lost.go).
	replaced map[string][]runtime.Container
}

// NewManager returns a manager for cfg.Runtime.
func NewManager(cfg Config) *Manager {
	if cfg.Volumes == nil {
		cfg.Volumes = noVolumes{}
	}
	if cfg.DNS == nil {
		cfg.DNS = dns.NewConfigurer(cfg.Recorder, cfg.Log, nil, nil, nil, "", "")
	}
	if cfg.HostsFile == "" {
		cfg.HostsFile = "/etc/hosts"
	}
	if cfg.Env == nil {
		cfg.Env = envvars.NewResolver(nil)
	}
	caps := cfg.Runtime.Capabilities()
	return &Manager{
		rt: cfg.Runtime, caps: caps, rec: cfg.Recorder, log: cfg.Log, runtimeName: cfg.RuntimeName, owner: cfg.Owner, dirs: cfg.Dirs,
		liveness: cfg.Liveness, startup: cfg.Startup, hooks: cfg.Hooks, node: cfg.Node,
		volumes:         cfg.Volumes,
		crashBackoff:    newBackoff(backoffInitial, backoffMax),
		imageBackoff:    newBackoff(backoffInitial, backoffMax),
		waiting:         map[string]map[string]status.Waiting{},
		messages:        map[string]map[string]string{},
		podCgroupTarget: map[string]runtime.Resources{},
		mountFailed:     map[string]bool{},
		mountRetries:    mountRetries,
		replaced:        map[string][]runtime.Container{},
		env:             cfg.Env,
		hostIPs:         cfg.HostIPs,
		secrets:         cfg.PullSecrets,
		userns:          cfg.UserNamespaces,
		starts:          make(chan struct{}, parallelStarts(caps)),
		dns:             cfg.DNS,
		hostsFile:       cfg.HostsFile,
		network:         cfg.Network,
		resources:       cfg.Resources,
		puller:          images.NewPuller(cfg.Runtime, cfg.ImagePullTimeout),
	}
}

// parallelStarts is how many pods get their sandbox and first containers at
// once: as many as the backend takes well, and with no bound a number no
// node reaches (max-pods is at most a few hundred).
func parallelStarts(c runtime.Capabilities) int {
	if c.ParallelStarts > 0 {
		return c.ParallelStarts
	}
	return 1 << 16
}

// containerEnv builds the container's environment for the sandbox it joins.
func (m *Manager) containerEnv(pod *v1.Pod, c *v1.Container, sb *runtime.Sandbox) ([]v1.EnvVar, error) {
	r, hostIPs := m.env, m.hostIPs
	podIPs := sb.IPs
	if pod.Spec.HostNetwork {
		// the pod's IPs are the node's, as its status says (the kubelet
		// takes them from there)
		podIPs = hostIPs
	}
	return r.Env(envvars.Pod{Pod: pod, PodIPs: podIPs, HostIPs: hostIPs, NodeAllocatable: m.node.Allocatable}, c)
}

// PersistBackoff keeps the restart back-off in path, so it survives a
// restart of runlet as the restart counts do (they live in labels).
func (m *Manager) PersistBackoff(path string) error {
	return m.crashBackoff.persist(path)
}

// RuntimeName is the prefix of container IDs in pod status.
func (m *Manager) RuntimeName() string { return m.runtimeName }

// Waiting returns why each container of the pod is waiting, as the last sync found.
func (m *Manager) Waiting(uid string) map[string]status.Waiting {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]status.Waiting, len(m.waiting[uid]))
	for k, v := range m.waiting[uid] {
		out[k] = v
	}
	return out
}

func (m *Manager) setWaiting(uid, name string, w *status.Waiting) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if w == nil {
		delete(m.waiting[uid], name)
		return
	}
	if m.waiting[uid] == nil {
		m.waiting[uid] = map[string]status.Waiting{}
	}
	m.waiting[uid][name] = *w
}

// Forget drops what the manager remembers of a pod.
func (m *Manager) Forget(uid string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.waiting, uid)
	delete(m.messages, uid)
	delete(m.podCgroupTarget, uid)
	delete(m.mountFailed, uid)
	delete(m.replaced, uid)
	// A pod deleted while its image pull was backing off leaves its last
	// pull errors (keyed <uid>_<image>).
	m.pullErrors.Range(func(k, _ any) bool {
		if strings.HasPrefix(k.(string), uid+"_") {
			m.pullErrors.Delete(k)
		}
		return true
	})
}

// GC drops backoff entries nobody touched for a long time.
func (m *Manager) GC() {
	m.crashBackoff.GC()
	m.imageBackoff.GC()
	m.gcNetwork()
}

func (m *Manager) event(pod *v1.Pod, typ, reason, format string, args ...any) {
	if m.rec != nil && pod != nil {
		m.rec.Eventf(pod, typ, reason, format, args...)
	}
}
