package volume

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/runlet/runlet/internal/logtest"
	"github.com/runlet/runlet/internal/poddir"
	"github.com/runlet/runlet/internal/podtest"
	"github.com/runlet/runlet/internal/volume/subpath"
	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	mount "k8s.io/mount-utils"
)

// fakeObjects holds configMaps and secrets, and counts pods registered.
type fakeObjects struct {
	mu         sync.Mutex
	configMaps map[string]*v1.ConfigMap
	secrets    map[string]*v1.Secret
	registered map[types.UID]int
}

func newFakeObjects() *fakeObjects {
	return &fakeObjects{configMaps: map[string]*v1.ConfigMap{}, secrets: map[string]*v1.Secret{}, registered: map[types.UID]int{}}
}

type configMapsOf struct{ *fakeObjects }
type secretsOf struct{ *fakeObjects }

func (f configMapsOf) Get(ns, name string) (*v1.ConfigMap, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if cm, ok := f.configMaps[ns+"/"+name]; ok {
		return cm.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(v1.Resource("configmap"), name)
}

func (f secretsOf) Get(ns, name string) (*v1.Secret, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.secrets[ns+"/"+name]; ok {
		return s.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(v1.Resource("secret"), name)
}

func (f *fakeObjects) RegisterPod(p *v1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.registered[p.UID]++
}

func (f *fakeObjects) UnregisterPod(p *v1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.registered, p.UID)
}

func (f *fakeObjects) putConfigMap(cm *v1.ConfigMap) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.configMaps[cm.Namespace+"/"+cm.Name] = cm
}

func (f *fakeObjects) putSecret(s *v1.Secret) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.secrets[s.Namespace+"/"+s.Name] = s
}

// fakeTokens hands out "token-<n>" and records the requests.
type fakeTokens struct {
	requests []*authenticationv1.TokenRequest
	sas      []string
	deleted  []types.UID
}

func (f *fakeTokens) GetServiceAccountToken(ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	f.requests = append(f.requests, tr)
	f.sas = append(f.sas, ns+"/"+name)
	out := tr.DeepCopy()
	out.Status.Token = "token-" + string(rune('0'+len(f.requests)))
	return out, nil
}

func (f *fakeTokens) DeleteServiceAccountToken(uid types.UID) { f.deleted = append(f.deleted, uid) }

// fakeSubpather makes subPath directories for real but binds nothing: the
// bind needs root; the end-to-end tests cover it.
type fakeSubpather struct{ subpath.Interface }

func (fakeSubpather) PrepareSafeSubpath(sp subpath.Subpath) (string, func(), error) {
	return sp.Path, nil, nil
}

type testEnv struct {
	t       *testing.T
	m       *Manager
	objs    *fakeObjects
	tokens  *fakeTokens
	mounter *mount.FakeMounter
	root    string
}

func newTestEnv(t *testing.T) *testEnv {
	root := t.TempDir()
	objs, tokens := newFakeObjects(), &fakeTokens{}
	log := logtest.Discard()
	m := NewManager(Config{Dirs: poddir.New(root), ConfigMaps: configMapsOf{objs}, Secrets: secretsOf{objs}, Tokens: tokens, Log: log})
	fm := mount.NewFakeMounter(nil)
	m.mounter = fm
	m.subpather = fakeSubpather{subpath.New(fm)}
	return &testEnv{t: t, m: m, objs: objs, tokens: tokens, mounter: fm, root: root}
}

func testPod(vols ...v1.Volume) *v1.Pod {
	return podtest.New("p", podtest.Namespace("ns"), podtest.UID("uid-1"), podtest.Labels(map[string]string{"app": "x"}),
		podtest.Volumes(vols...), podtest.ServiceAccount("default"), podtest.Containers(v1.Container{Name: "c"}))
}

// setUp runs SetUpPod and fails the test on any error.
func (e *testEnv) setUp(pod *v1.Pod) {
	e.t.Helper()
	ready, errs := e.m.SetUpPod(context.Background(), pod)
	if !ready || len(errs) > 0 {
		e.t.Fatalf("SetUpPod: ready=%v errs=%v", ready, errs)
	}
}

// volumeDir is where the pod's volume of plugin lives.
func (e *testEnv) volumeDir(pod *v1.Pod, plugin, name string) string {
	return e.m.cfg.Dirs.Volume(string(pod.UID), plugin, name)
}

// read reads a file of a volume as a container sees it (through ..data).
func (e *testEnv) read(dir, name string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// mode is the permission bits of the file a name in dir resolves to.
func (e *testEnv) mode(dir, name string) os.FileMode {
	e.t.Helper()
	fi, err := os.Stat(filepath.Join(dir, name))
	if err != nil {
		e.t.Fatal(err)
	}
	return fi.Mode() & (os.ModePerm | os.ModeSetgid | os.ModeSticky)
}

// visible lists the names a container sees in dir (hidden ..data entries left out).
func visible(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "..") {
			out = append(out, e.Name())
		}
	}
	return out
}

// tmpfsMounts lists the tmpfs mounts the fake mounter was asked for.
func (e *testEnv) tmpfsMounts() []mount.MountPoint {
	var out []mount.MountPoint
	mps, _ := e.mounter.List()
	for _, mp := range mps {
		if mp.Type == "tmpfs" {
			out = append(out, mp)
		}
	}
	return out
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("changing a file's group needs root")
	}
}

func int32p(v int32) *int32 { return &v }
func int64p(v int64) *int64 { return &v }
func boolp(v bool) *bool    { return &v }

// groupOf is the group owning path (symlinks followed).
func groupOf(t *testing.T, path string) uint32 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t).Gid
}

func ownerOf(fi os.FileInfo) uint32 { return fi.Sys().(*syscall.Stat_t).Uid }

// realSubpath is the real subPath code over the env's fake mounter: enough
// to open paths safely; the bind itself needs root.
func realSubpath(e *testEnv) subpath.Interface { return subpath.New(e.mounter) }
