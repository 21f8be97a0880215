package checkpoint

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/runlet/runlet/internal/logtest"
	"github.com/runlet/runlet/internal/podtest"
	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func open(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir, logtest.Discard())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// withVolumes is a pod that reads a configMap and a secret (volumes and env).
func withVolumes(name, uid string) *v1.Pod {
	p := podtest.New(name, podtest.Namespace("ns"), podtest.UID(uid),
		podtest.Containers(v1.Container{Name: "c", Image: "img:1", Env: []v1.EnvVar{{Name: "K", ValueFrom: &v1.EnvVarSource{
			SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "sec"}, Key: "k"}}}}}))
	p.Spec.Volumes = []v1.Volume{{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{
		LocalObjectReference: v1.LocalObjectReference{Name: "cm"}}}}}
	p.Status = v1.PodStatus{Phase: v1.PodPending}
	return p
}

func running(restarts int32) v1.PodStatus {
	return v1.PodStatus{Phase: v1.PodRunning, PodIP: "10.1.0.5", ContainerStatuses: []v1.ContainerStatus{{
		Name: "c", RestartCount: restarts, State: v1.ContainerState{Running: &v1.ContainerStateRunning{}}}}}
}

// TestRoundTrip: the pods the API holds, with the status runlet wrote last,
// come back from a fresh Store on the same directory.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	a, b := withVolumes("a", "uid-a"), withVolumes("b", "uid-b")
	s.SetPods([]*v1.Pod{a, b})
	withStatus := a.DeepCopy()
	withStatus.Status = running(3)
	s.SetStatus(withStatus)
	s.Flush()

	got := open(t, dir).Pods()
	if len(got) != 2 {
		t.Fatalf("pods read back: %d; want 2", len(got))
	}
	byName := map[string]*v1.Pod{got[0].Name: got[0], got[1].Name: got[1]}
	if st := byName["a"].Status; st.Phase != v1.PodRunning || st.ContainerStatuses[0].RestartCount != 3 || st.PodIP != "10.1.0.5" {
		t.Errorf("a's status = %+v; want the one written last (Running, 3 restarts)", st)
	}
	if st := byName["b"].Status; st.Phase != v1.PodPending {
		t.Errorf("b's status = %+v; want the API's (Pending): runlet wrote none", st)
	}
	if byName["a"].Spec.Volumes[0].ConfigMap.Name != "cm" || byName["a"].UID != "uid-a" {
		t.Errorf("a read back = %+v; want its spec and UID", byName["a"])
	}
}

// TestStatusKeptOverAPICopy: a pod handed over again (the framework's copy,
// with the API's older status) keeps the status runlet wrote.
func TestStatusKeptOverAPICopy(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	a := withVolumes("a", "uid-a")
	s.SetPods([]*v1.Pod{a})
	st := a.DeepCopy()
	st.Status = running(2)
	s.SetStatus(st)
	again := a.DeepCopy()
	again.Labels = map[string]string{"new": "label"}
	s.SetPods([]*v1.Pod{again})
	s.Flush()
	got := open(t, dir).Pods()
	if len(got) != 1 || got[0].Labels["new"] != "label" || got[0].Status.ContainerStatuses[0].RestartCount != 2 {
		t.Fatalf("read back %+v; want the new labels with runlet's status (2 restarts)", got)
	}
}

// TestDeleteRemovesEntry: a pod that leaves the API's set loses its entry,
// and the objects only it referred to go with it; a status for it later
// brings nothing back.
func TestDeleteRemovesEntry(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	a, b := withVolumes("a", "uid-a"), withVolumes("b", "uid-b")
	b.Spec.Volumes[0].ConfigMap.Name = "only-b"
	s.SetPods([]*v1.Pod{a, b})
	cms := ConfigMaps{ConfigMapSource: fakeConfigMaps{}, Store: s}
	for _, name := range []string{"cm", "only-b"} {
		if _, err := cms.Get("ns", name); err != nil {
			t.Fatal(err)
		}
	}
	s.Flush()
	for _, f := range []string{podFile("uid-b"), configMapFile("ns", "only-b")} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("%s before the delete: %v", f, err)
		}
	}

	s.SetPods([]*v1.Pod{a})
	late := b.DeepCopy()
	late.Status = running(1)
	s.SetStatus(late)
	s.Flush()
	for _, f := range []string{podFile("uid-b"), configMapFile("ns", "only-b")} {
		if _, err := os.Stat(filepath.Join(dir, f)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s after b left the API: %v; want it removed", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, configMapFile("ns", "cm"))); err != nil {
		t.Errorf("a's configMap after b left: %v; want it kept", err)
	}
	if got := open(t, dir).Pods(); len(got) != 1 || got[0].UID != "uid-a" {
		t.Errorf("pods read back %v; want a alone", got)
	}
}

// TestTornWriteRefused: an entry cut short (a crash in the middle of a write
// that bypassed the rename, a full disk), or whose data no longer matches its
// checksum, is refused, removed, and never returned as a pod; so is what an
// unfinished write left.
func TestTornWriteRefused(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	s.SetPods([]*v1.Pod{withVolumes("good", "uid-good"), withVolumes("torn", "uid-torn"), withVolumes("flipped", "uid-flipped")})
	s.Flush()

	torn := filepath.Join(dir, podFile("uid-torn"))
	raw, err := os.ReadFile(torn)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(torn, raw[:len(raw)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	flipped := filepath.Join(dir, podFile("uid-flipped"))
	raw, err = os.ReadFile(flipped)
	if err != nil {
		t.Fatal(err)
	}
	// Still valid JSON, another image: only the checksum tells.
	if err := os.WriteFile(flipped, bytes.Replace(raw, []byte("img:1"), []byte("img:2"), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	leftover := filepath.Join(dir, podsDir, ".uid-x.json.tmp-123")
	if err := os.WriteFile(leftover, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}

	got := open(t, dir).Pods()
	if len(got) != 1 || got[0].UID != "uid-good" {
		t.Fatalf("pods read back %v; want only the intact one", got)
	}
	for _, f := range []string{torn, flipped, leftover} {
		if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %v; want it removed", f, err)
		}
	}
}

// TestFileModes: the checkpoint is root's alone: the directories 0700, every
// file 0600, secrets included.
func TestFileModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "checkpoint")
	s := open(t, dir)
	s.SetPods([]*v1.Pod{withVolumes("a", "uid-a")})
	if _, err := (Secrets{SecretSource: fakeSecrets{}, Store: s}).Get("ns", "sec"); err != nil {
		t.Fatal(err)
	}
	s.Flush()
	err := filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		want := os.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v; want %v", path, fi.Mode().Perm(), want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, secretFile("ns", "sec"))); err != nil {
		t.Errorf("the pod's secret: %v; want it kept", err)
	}
}

// TestOfflineObjects: offline, the objects the pods used come from the
// checkpoint, an optional one the API did not have is NotFound as the API
// said, and one never kept is an error; an object no pod refers to is never
// kept.
func TestOfflineObjects(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	s.SetPods([]*v1.Pod{withVolumes("a", "uid-a")})
	cms := ConfigMaps{ConfigMapSource: fakeConfigMaps{"missing": true}, Store: s}
	for _, name := range []string{"cm", "unrelated"} {
		if _, err := cms.Get("ns", name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := (ConfigMaps{ConfigMapSource: fakeConfigMaps{"cm": true}, Store: s}).Get("ns", "cm"); !apierrors.IsNotFound(err) {
		t.Fatalf("the API's answer for a missing configMap: %v", err)
	}
	s.Flush()
	if _, err := os.Stat(filepath.Join(dir, configMapFile("ns", "unrelated"))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a configMap no pod refers to: %v; want none kept", err)
	}

	// Kept once more while present, then read offline by a fresh store.
	if _, err := cms.Get("ns", "cm"); err != nil {
		t.Fatal(err)
	}
	s.Flush()
	off := open(t, dir)
	off.SetOffline(true)
	offCMs := ConfigMaps{ConfigMapSource: unreachable{}, Store: off}
	cm, err := offCMs.Get("ns", "cm")
	if err != nil || cm.Data["from"] != "api" {
		t.Fatalf("offline get = %+v, %v; want the kept configMap", cm, err)
	}
	if _, err := offCMs.Get("ns", "never"); err == nil || apierrors.IsNotFound(err) {
		t.Errorf("offline get of an object never kept = %v; want an error that is not NotFound", err)
	}
}

// TestNodeKept: the node's labels, taints and pod CIDRs come back.
func TestNodeKept(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	if s.Node() != nil {
		t.Fatal("a new checkpoint has a node")
	}
	s.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"zone": "a"}},
		Spec:   v1.NodeSpec{PodCIDR: "10.1.0.0/24", PodCIDRs: []string{"10.1.0.0/24"}},
		Status: v1.NodeStatus{Images: []v1.ContainerImage{{Names: []string{"big"}}}}})
	s.Flush()
	n := open(t, dir).Node()
	if n == nil || n.Labels["zone"] != "a" || n.Spec.PodCIDRs[0] != "10.1.0.0/24" || len(n.Status.Images) != 0 {
		t.Fatalf("node read back %+v; want its labels and pod CIDRs, no status", n)
	}
}

type fakeConfigMaps map[string]bool // names the API does not have

func (f fakeConfigMaps) Get(ns, name string) (*v1.ConfigMap, error) {
	if f[name] {
		return nil, apierrors.NewNotFound(v1.Resource("configmap"), name)
	}
	return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: "1"},
		Data: map[string]string{"from": "api"}}, nil
}
func (fakeConfigMaps) RegisterPod(*v1.Pod)   {}
func (fakeConfigMaps) UnregisterPod(*v1.Pod) {}

type fakeSecrets struct{}

func (fakeSecrets) Get(ns, name string) (*v1.Secret, error) {
	return &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, ResourceVersion: "1"},
		Data: map[string][]byte{"k": []byte("v")}}, nil
}
func (fakeSecrets) RegisterPod(*v1.Pod)   {}
func (fakeSecrets) UnregisterPod(*v1.Pod) {}

// unreachable fails every call: the checkpoint must not ask it offline.
type unreachable struct{}

func (unreachable) Get(string, string) (*v1.ConfigMap, error) {
	return nil, errors.New("the apiserver was asked while offline")
}
func (unreachable) RegisterPod(*v1.Pod)   {}
func (unreachable) UnregisterPod(*v1.Pod) {}

// TestOfflineTokensAndServices: a pod's token and its namespace's services
// are served offline as they were last handed out; the token goes with its
// pod.
func TestOfflineTokensAndServices(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	a := withVolumes("a", "uid-a")
	s.SetPods([]*v1.Pod{a})
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{Audiences: []string{"api"},
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", Name: "a", UID: "uid-a"}}}
	if _, err := (Tokens{TokenSource: fakeTokens("t1"), Store: s}).GetServiceAccountToken("ns", "default", tr); err != nil {
		t.Fatal(err)
	}
	if _, err := (Services{ServiceSource: fakeServices{}, Store: s}).List("ns"); err != nil {
		t.Fatal(err)
	}
	s.Flush()

	off := open(t, dir)
	off.SetOffline(true)
	got, err := (Tokens{TokenSource: fakeTokens("asked while offline"), Store: off}).GetServiceAccountToken("ns", "default", tr)
	if err != nil || got.Status.Token != "t1" {
		t.Fatalf("offline token = %+v, %v; want t1", got, err)
	}
	svcs, err := (Services{ServiceSource: nil, Store: off}).List("ns")
	if err != nil || len(svcs) != 1 || svcs[0].Spec.ClusterIP != "10.0.0.9" {
		t.Fatalf("offline services = %v, %v; want the one kept", svcs, err)
	}

	off.SetPods(nil)
	off.Flush()
	if left, _ := filepath.Glob(filepath.Join(dir, tokensDir, "*")); len(left) != 0 {
		t.Errorf("tokens left after their pod: %v", left)
	}
}

type fakeTokens string

func (f fakeTokens) GetServiceAccountToken(_, _ string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	out := tr.DeepCopy()
	out.Status.Token = string(f)
	return out, nil
}
func (fakeTokens) DeleteServiceAccountToken(types.UID) {}

type fakeServices struct{}

func (fakeServices) List(ns string) ([]*v1.Service, error) {
	return []*v1.Service{{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db", ResourceVersion: "4"},
		Spec: v1.ServiceSpec{ClusterIP: "10.0.0.9", Ports: []v1.ServicePort{{Port: 5432}}}}}, nil
}
