// Package volume prepares pods' volumes on the node as the kubelet's volume
// manager and plugins do: each volume under --root-dir in the kubelet's
// layout (pods/<uid>/volumes/<plugin>/<name>), bind-mounted into containers
// by the backend, torn down with the pod. configMap, secret, projected and
// downwardAPI volumes are written again on every sync of a running pod (an
// atomic ..data swap), so their files follow their sources.
package volume

import (
	"context"
	"fmt"
	"sync"

	"github.com/runlet/runlet/internal/poddir"
	"github.com/runlet/runlet/internal/volume/subpath"
	"github.com/sirupsen/logrus"
	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	mount "k8s.io/mount-utils"
)

// The kubelet's plugin names; their escaped form names the directories.
const (
	emptyDirPlugin    = "kubernetes.io/empty-dir"
	configMapPlugin   = "kubernetes.io/configmap"
	secretPlugin      = "kubernetes.io/secret"
	projectedPlugin   = "kubernetes.io/projected"
	downwardAPIPlugin = "kubernetes.io/downward-api"
)

// ConfigMaps reads the configMaps pods refer to (internal/objects).
type ConfigMaps interface {
	Get(namespace, name string) (*v1.ConfigMap, error)
	RegisterPod(*v1.Pod)
	UnregisterPod(*v1.Pod)
}

// Secrets reads the secrets pods refer to (internal/objects).
type Secrets interface {
	Get(namespace, name string) (*v1.Secret, error)
	RegisterPod(*v1.Pod)
	UnregisterPod(*v1.Pod)
}

// Tokens hands out service account tokens bound to pods (internal/token).
type Tokens interface {
	GetServiceAccountToken(namespace, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)
	DeleteServiceAccountToken(podUID types.UID)
}

// TrustBundles reads the trust anchors of ClusterTrustBundles, PEM
// (internal/trustbundle).
type TrustBundles interface {
	ByName(ctx context.Context, name string, allowMissing bool) ([]byte, error)
	BySigner(ctx context.Context, signer string, sel *metav1.LabelSelector, allowMissing bool) ([]byte, error)
}

// PodCertificates issues pods' certificates (internal/podcertificate).
type PodCertificates interface {
	// Credentials are the PEM key and chain of a podCertificate source,
	// once issued.
	Credentials(pod *v1.Pod, volume string, index int, src *v1.PodCertificateProjection) (key, chain []byte, err error)
	// Forget drops what is kept for a pod that is gone.
	Forget(uid types.UID)
}

// Config wires a Manager. Without ConfigMaps, Secrets, Tokens, TrustBundles or Client the
// volumes needing them fail to mount with an error saying so.
type Config struct {
	Dirs       poddir.Dirs
	ConfigMaps ConfigMaps
	Secrets    Secrets
	Tokens     Tokens
	// TrustBundles serves clusterTrustBundle projections.
	TrustBundles TrustBundles
	// PodCertificates serves podCertificate projections.
	PodCertificates PodCertificates
	// Client reads persistentVolumeClaims and persistentVolumes.
	Client kubernetes.Interface
	// ResourceFieldRef resolves a downward API resourceFieldRef of a
	// container (internal/envvars: the same rules as for env).
	ResourceFieldRef func(pod *v1.Pod, c *v1.Container, ref *v1.ResourceFieldSelector, allocatable v1.ResourceList) (string, error)
	// NodeAllocatable is the node's allocatable resources: the default size
	// of a memory-backed emptyDir, and a resourceFieldRef's limit where the
	// container sets none.
	NodeAllocatable v1.ResourceList
	Log             logrus.FieldLogger
}

// Manager sets up and tears down pods' volumes.
type Manager struct {
	cfg       Config
	mounter   mount.Interface
	subpather subpath.Interface

	mu   sync.Mutex
	pods map[types.UID]*podVolumes
}

func (m *Manager) nodeAllocatable() v1.ResourceList { return m.cfg.NodeAllocatable }

// podVolumes is what the manager set up for one pod.
type podVolumes struct {
	mu sync.Mutex
	// pod is the version last set up: its references are dropped with it.
	pod     *v1.Pod
	volumes map[string]*mounted // by volume name
}

// mounted is one volume that is ready on the host.
type mounted struct {
	// path is where its content is on the host: the bind source.
	path string
	// image, for an image volume, is the OCI image the backend mounts
	// (read-only) in place of a host path.
	image string
	// readOnly volumes are mounted read-only whatever the volumeMount says
	// (configMap, secret, projected, downwardAPI; a read-only claim).
	readOnly bool
	// remount: the content follows its source and is written again on every
	// sync (the kubelet's RequiresRemount).
	remount bool
	// relabel: the kubelet's SELinuxRelabel attribute, true for every
	// volume runlet makes or owns, false for a host path.
	relabel bool
}

// NewManager returns a manager for cfg.
func NewManager(cfg Config) *Manager {
	if cfg.Log == nil {
		cfg.Log = logrus.New()
	}
	mounter := newMounter()
	return &Manager{cfg: cfg, mounter: mounter, subpather: subpath.New(mounter), pods: map[types.UID]*podVolumes{}}
}

// SetUpPod prepares the pod's volumes: those not set up yet, and again
// those whose content follows a source. errs holds one error per volume that
// failed, in the kubelet's FailedMount words; ready is false while a volume
// has never been set up (the pod's containers must not start yet). A volume
// that was set up once and fails to update keeps its last content.
func (m *Manager) SetUpPod(ctx context.Context, pod *v1.Pod) (ready bool, errs []error) {
	if m.cfg.ConfigMaps != nil {
		m.cfg.ConfigMaps.RegisterPod(pod)
	}
	if m.cfg.Secrets != nil {
		m.cfg.Secrets.RegisterPod(pod)
	}
	pv := m.podState(pod.UID, true)
	pv.mu.Lock()
	defer pv.mu.Unlock()
	pv.pod = pod
	args := mountArgsFor(pod)
	ready = true
	for i := range pod.Spec.Volumes {
		vol := &pod.Spec.Volumes[i]
		cur, done := pv.volumes[vol.Name]
		if done && !cur.remount {
			continue
		}
		mv, err := m.setUp(ctx, pod, vol, args)
		if err != nil {
			errs = append(errs, fmt.Errorf("MountVolume.SetUp failed for volume %q : %w", vol.Name, err))
			ready = ready && done
			continue
		}
		pv.volumes[vol.Name] = mv
	}
	return ready, errs
}

// setUp prepares one volume with the plugin its source calls for.
func (m *Manager) setUp(ctx context.Context, pod *v1.Pod, vol *v1.Volume, args mountArgs) (*mounted, error) {
	src := &vol.VolumeSource
	switch {
	case src.EmptyDir != nil:
		dir := m.dir(pod, emptyDirPlugin, vol.Name)
		return &mounted{path: dir, relabel: true}, m.setUpEmptyDir(pod, vol.Name, *src.EmptyDir, dir, args)
	case src.ConfigMap != nil:
		dir := m.dir(pod, configMapPlugin, vol.Name)
		return &mounted{path: dir, readOnly: true, remount: true, relabel: true}, m.setUpConfigMap(pod, vol.Name, src.ConfigMap, dir, args)
	case src.Secret != nil:
		dir := m.dir(pod, secretPlugin, vol.Name)
		return &mounted{path: dir, readOnly: true, remount: true, relabel: true}, m.setUpSecret(pod, vol.Name, src.Secret, dir, args)
	case src.Projected != nil:
		dir := m.dir(pod, projectedPlugin, vol.Name)
		return &mounted{path: dir, readOnly: true, remount: true, relabel: true}, m.setUpProjected(pod, vol.Name, src.Projected, dir, args)
	case src.DownwardAPI != nil:
		dir := m.dir(pod, downwardAPIPlugin, vol.Name)
		return &mounted{path: dir, readOnly: true, remount: true, relabel: true}, m.setUpDownwardAPI(pod, vol.Name, src.DownwardAPI, dir, args)
	case src.HostPath != nil:
		return &mounted{path: src.HostPath.Path}, setUpHostPath(src.HostPath)
	case src.PersistentVolumeClaim != nil:
		return m.setUpClaim(ctx, pod, src.PersistentVolumeClaim, args)
	case src.Image != nil:
		// The image is pulled with the containers' images, and the backend
		// mounts it: nothing is made on the host.
		return &mounted{image: src.Image.Reference, readOnly: true}, nil
	}
	return nil, unsupported(src)
}

func (m *Manager) dir(pod *v1.Pod, plugin, name string) string {
	return m.cfg.Dirs.Volume(string(pod.UID), plugin, name)
}

func (m *Manager) podState(uid types.UID, create bool) *podVolumes {
	m.mu.Lock()
	defer m.mu.Unlock()
	pv := m.pods[uid]
	if pv == nil && create {
		pv = &podVolumes{volumes: map[string]*mounted{}}
		m.pods[uid] = pv
	}
	return pv
}

// volume returns a volume of the pod that is set up.
func (m *Manager) volume(uid types.UID, name string) (*mounted, bool) {
	pv := m.podState(uid, false)
	if pv == nil {
		return nil, false
	}
	pv.mu.Lock()
	defer pv.mu.Unlock()
	mv, ok := pv.volumes[name]
	return mv, ok
}

// mountArgs are the pod-wide settings every plugin applies, as the
// kubelet's MounterArgs.
type mountArgs struct {
	fsGroup *int64
	policy  *v1.PodFSGroupChangePolicy
	// fsUser owns projected tokens when every container runs as that user.
	fsUser *int64
}

func mountArgsFor(pod *v1.Pod) mountArgs {
	var a mountArgs
	if sc := pod.Spec.SecurityContext; sc != nil {
		a.fsGroup, a.policy = sc.FSGroup, sc.FSGroupChangePolicy
	}
	a.fsUser = fsUserFrom(pod)
	return a
}

// fsUserFrom is the one runAsUser every container of the pod runs with, or
// nil (the kubelet's FsUserFrom).
func fsUserFrom(pod *v1.Pod) *int64 {
	var fsUser *int64
	for _, c := range podContainers(pod) {
		user := effectiveRunAsUser(pod, c)
		if user == nil || (fsUser != nil && *fsUser != *user) {
			return nil
		}
		fsUser = user
	}
	return fsUser
}

func effectiveRunAsUser(pod *v1.Pod, c *v1.Container) *int64 {
	if c.SecurityContext != nil && c.SecurityContext.RunAsUser != nil {
		return c.SecurityContext.RunAsUser
	}
	if pod.Spec.SecurityContext != nil {
		return pod.Spec.SecurityContext.RunAsUser
	}
	return nil
}

func podContainers(pod *v1.Pod) []*v1.Container {
	out := make([]*v1.Container, 0, len(pod.Spec.InitContainers)+len(pod.Spec.Containers))
	for i := range pod.Spec.InitContainers {
		out = append(out, &pod.Spec.InitContainers[i])
	}
	for i := range pod.Spec.Containers {
		out = append(out, &pod.Spec.Containers[i])
	}
	return out
}
