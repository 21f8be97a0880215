package volume

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestEmptyDir: a 0777 directory on disk; medium Memory is a tmpfs sized by
// sizeLimit, capped by the pod's memory limit and node allocatable memory.
func TestEmptyDir(t *testing.T) {
	e := newTestEnv(t)
	e.m.cfg.NodeAllocatable = v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")}
	size := resource.MustParse("64Mi")
	pod := testPod(
		v1.Volume{Name: "disk", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		v1.Volume{Name: "mem", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: v1.StorageMediumMemory, SizeLimit: &size}}},
	)
	e.setUp(pod)
	disk := e.volumeDir(pod, emptyDirPlugin, "disk")
	if m := e.mode(disk, "."); m != 0777 {
		t.Errorf("disk emptyDir mode %o", m)
	}
	mounts := e.tmpfsMounts()
	if len(mounts) != 1 || mounts[0].Path != e.volumeDir(pod, emptyDirPlugin, "mem") || !reflect.DeepEqual(mounts[0].Opts, []string{"size=67108864"}) {
		t.Fatalf("tmpfs mounts %+v", mounts)
	}
	// Set up once: a later sync leaves an emptyDir alone (its mode is the pod's to change).
	if err := os.Chmod(disk, 0700); err != nil {
		t.Fatal(err)
	}
	e.setUp(pod)
	if m := e.mode(disk, "."); m != 0700 {
		t.Errorf("a later sync reset the emptyDir's mode to %o", m)
	}
}

func TestTmpfsSize(t *testing.T) {
	m := NewManager(Config{NodeAllocatable: v1.ResourceList{v1.ResourceMemory: resource.MustParse("1Gi")}})
	limited := func(limits ...string) *v1.Pod {
		p := testPod()
		p.Spec.Containers = nil
		for _, l := range limits {
			p.Spec.Containers = append(p.Spec.Containers, v1.Container{Resources: v1.ResourceRequirements{
				Limits: v1.ResourceList{v1.ResourceMemory: resource.MustParse(l)}}})
		}
		return p
	}
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
		size *resource.Quantity
		want int64
	}{
		{"node allocatable", testPod(), nil, 1 << 30},
		{"pod limit", limited("100Mi", "28Mi"), nil, 128 << 20},
		{"sizeLimit below the pod limit", limited("100Mi"), q("10Mi"), 10 << 20},
		{"sizeLimit above node allocatable", testPod(), q("2Gi"), 1 << 30},
	} {
		if got := m.tmpfsSize(tc.pod, tc.size); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestEmptyDirFSGroup: the group owns the directory, which gains setgid.
func TestEmptyDirFSGroup(t *testing.T) {
	requireRoot(t)
	e := newTestEnv(t)
	pod := testPod(v1.Volume{Name: "d", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}})
	pod.Spec.SecurityContext = &v1.PodSecurityContext{FSGroup: int64p(1234)}
	e.setUp(pod)
	dir := e.volumeDir(pod, emptyDirPlugin, "d")
	if m := e.mode(dir, "."); m != 0777|os.ModeSetgid || groupOf(t, dir) != 1234 {
		t.Errorf("mode %o group %d, want 2777 and 1234", m, groupOf(t, dir))
	}
}

// TestSecret: keys as files on tmpfs; items and modes as for configMaps.
func TestSecret(t *testing.T) {
	e := newTestEnv(t)
	e.objs.putSecret(&v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"}, Data: map[string][]byte{"user": []byte("u"), "pass": []byte("p")}})
	pod := testPod(v1.Volume{Name: "v", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{
		SecretName: "s", DefaultMode: int32p(0400), Items: []v1.KeyToPath{{Key: "pass", Path: "p/pass", Mode: int32p(0600)}, {Key: "user", Path: "user"}}}}})
	e.setUp(pod)
	dir := e.volumeDir(pod, secretPlugin, "v")
	if e.read(dir, "p/pass") != "p" || e.mode(dir, "p/pass") != 0600 || e.mode(dir, "user") != 0400 {
		t.Errorf("pass %q mode %o, user mode %o", e.read(dir, "p/pass"), e.mode(dir, "p/pass"), e.mode(dir, "user"))
	}
	if m := e.tmpfsMounts(); len(m) != 1 || m[0].Path != dir {
		t.Errorf("secret not on tmpfs: %+v", m)
	}

	missing := testPod(v1.Volume{Name: "v", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{
		SecretName: "s", Items: []v1.KeyToPath{{Key: "nope", Path: "x"}}}}})
	missing.UID = "uid-2"
	_, errs := e.m.SetUpPod(context.Background(), missing)
	if len(errs) != 1 || !strings.HasSuffix(errs[0].Error(), "references non-existent secret key: nope") {
		t.Errorf("missing key: %v", errs)
	}
	absent := testPod(v1.Volume{Name: "v", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "absent"}}})
	absent.UID = "uid-3"
	if ready, errs := e.m.SetUpPod(context.Background(), absent); ready || len(errs) != 1 || !strings.HasSuffix(errs[0].Error(), `secret "absent" not found`) {
		t.Errorf("absent secret: ready=%v %v", ready, errs)
	}
}

// TestProjectedServiceAccount: the default kube-api-access volume: a token
// bound to the pod, ca.crt from kube-root-ca.crt and the namespace.
func TestProjectedServiceAccount(t *testing.T) {
	e := newTestEnv(t)
	e.objs.putConfigMap(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "kube-root-ca.crt"}, Data: map[string]string{"ca.crt": "CA"}})
	exp := int64(3607)
	pod := testPod(v1.Volume{Name: "kube-api-access-x", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
		DefaultMode: int32p(0644),
		Sources: []v1.VolumeProjection{
			{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: &exp, Audience: "api"}},
			{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items: []v1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
			{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{
				{Path: "namespace", FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
		}}}})
	e.setUp(pod)
	dir := e.volumeDir(pod, projectedPlugin, "kube-api-access-x")
	if e.read(dir, "token") != "token-1" || e.read(dir, "ca.crt") != "CA" || e.read(dir, "namespace") != "ns" {
		t.Fatalf("token %q ca.crt %q namespace %q", e.read(dir, "token"), e.read(dir, "ca.crt"), e.read(dir, "namespace"))
	}
	if m := e.mode(dir, "token"); m != 0644 {
		t.Errorf("token mode %o, want the default mode", m)
	}
	tr := e.tokens.requests[0]
	ref := tr.Spec.BoundObjectRef
	if e.tokens.sas[0] != "ns/default" || ref == nil || ref.Kind != "Pod" || ref.Name != "p" || ref.UID != "uid-1" ||
		!reflect.DeepEqual(tr.Spec.Audiences, []string{"api"}) || *tr.Spec.ExpirationSeconds != 3607 {
		t.Errorf("token request for %s: %+v", e.tokens.sas[0], tr.Spec)
	}
	// Every sync asks the token manager again: it refreshes before expiry.
	e.setUp(pod)
	if len(e.tokens.requests) != 2 || e.read(dir, "token") != "token-2" {
		t.Errorf("the token was not refreshed on the next sync (%d requests)", len(e.tokens.requests))
	}
}

// TestProjectedTokenModeWithOwner: with an fsGroup or a single runAsUser the
// token is 0600 (0640 after the group change) and owned by that user.
func TestProjectedTokenModeWithOwner(t *testing.T) {
	requireRoot(t)
	e := newTestEnv(t)
	pod := testPod(v1.Volume{Name: "t", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
		DefaultMode: int32p(0644), Sources: []v1.VolumeProjection{{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token"}}}}}})
	pod.Spec.SecurityContext = &v1.PodSecurityContext{RunAsUser: int64p(1000), FSGroup: int64p(2000)}
	e.setUp(pod)
	dir := e.volumeDir(pod, projectedPlugin, "t")
	fi, err := os.Stat(dir + "/token")
	if err != nil {
		t.Fatal(err)
	}
	if m := e.mode(dir, "token"); m != 0640 || groupOf(t, dir+"/token") != 2000 || ownerOf(fi) != 1000 {
		t.Errorf("token mode %o group %d owner %d, want 0640 2000 1000", m, groupOf(t, dir+"/token"), ownerOf(fi))
	}
}

// TestProjectedFailures: every failing source is reported and nothing is
// written until all succeed.
func TestProjectedFailures(t *testing.T) {
	e := newTestEnv(t)
	pod := testPod(v1.Volume{Name: "p", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
		{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "c"}}},
		{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "s"}}},
		{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "opt"}, Optional: boolp(true)}},
	}}}})
	ready, errs := e.m.SetUpPod(context.Background(), pod)
	if ready || len(errs) != 1 || errs[0].Error() != `MountVolume.SetUp failed for volume "p" : [configmap "c" not found, secret "s" not found]` {
		t.Fatalf("ready=%v errs=%v", ready, errs)
	}
	if _, err := os.Stat(e.volumeDir(pod, projectedPlugin, "p")); !os.IsNotExist(err) {
		t.Errorf("the volume was written: %v", err)
	}
}

// TestDownwardAPI: pod fields and a container's resources as files; label
// changes reach the files on the next sync.
func TestDownwardAPI(t *testing.T) {
	e := newTestEnv(t)
	e.m.cfg.ResourceFieldRef = func(pod *v1.Pod, c *v1.Container, ref *v1.ResourceFieldSelector, _ v1.ResourceList) (string, error) {
		return c.Name + ":" + ref.Resource, nil
	}
	pod := testPod(v1.Volume{Name: "d", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{
		DefaultMode: int32p(0644),
		Items: []v1.DownwardAPIVolumeFile{
			{Path: "labels", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.labels"}},
			{Path: "name", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.name"}, Mode: int32p(0400)},
			{Path: "uid", FieldRef: &v1.ObjectFieldSelector{FieldPath: "metadata.uid"}},
			{Path: "cpu", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "c", Resource: "limits.cpu"}},
		}}}})
	pod.Labels = map[string]string{"b": "2", "a": "1"}
	e.setUp(pod)
	dir := e.volumeDir(pod, downwardAPIPlugin, "d")
	if got := e.read(dir, "labels"); got != "a=\"1\"\nb=\"2\"" {
		t.Errorf("labels %q", got)
	}
	if e.read(dir, "name") != "p" || e.mode(dir, "name") != 0400 || e.read(dir, "uid") != "uid-1" || e.read(dir, "cpu") != "c:limits.cpu" {
		t.Errorf("name %q (%o) uid %q cpu %q", e.read(dir, "name"), e.mode(dir, "name"), e.read(dir, "uid"), e.read(dir, "cpu"))
	}
	updated := pod.DeepCopy()
	updated.Labels["a"] = "changed"
	e.setUp(updated)
	if got := e.read(dir, "labels"); got != "a=\"changed\"\nb=\"2\"" {
		t.Errorf("labels after the update %q", got)
	}
	bad := testPod(v1.Volume{Name: "d", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{
		Items: []v1.DownwardAPIVolumeFile{{Path: "x", ResourceFieldRef: &v1.ResourceFieldSelector{ContainerName: "nope", Resource: "limits.cpu"}}}}}})
	bad.UID = "uid-2"
	if _, errs := e.m.SetUpPod(context.Background(), bad); len(errs) != 1 || !strings.Contains(errs[0].Error(), `container "nope" not found`) {
		t.Errorf("unknown container: %v", errs)
	}
}

// TestUnsupported: a volume type runlet has no plugin for fails, naming it.
func TestUnsupported(t *testing.T) {
	e := newTestEnv(t)
	pod := testPod(v1.Volume{Name: "n", VolumeSource: v1.VolumeSource{NFS: &v1.NFSVolumeSource{Server: "s", Path: "/"}}},
		v1.Volume{Name: "c", VolumeSource: v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: "d"}}})
	ready, errs := e.m.SetUpPod(context.Background(), pod)
	if ready || len(errs) != 2 ||
		errs[0].Error() != `MountVolume.SetUp failed for volume "n" : runlet does not support nfs volumes` ||
		errs[1].Error() != `MountVolume.SetUp failed for volume "c" : runlet does not support csi volumes` {
		t.Fatalf("ready=%v errs=%v", ready, errs)
	}
}

// fakeCerts serves nothing until chain is set.
type fakeCerts struct {
	key, chain []byte
	asked      []string // volume/index of each call
	forgot     []types.UID
}

func (f *fakeCerts) Credentials(_ *v1.Pod, volume string, index int, _ *v1.PodCertificateProjection) ([]byte, []byte, error) {
	f.asked = append(f.asked, fmt.Sprintf("%s/%d", volume, index))
	if f.chain == nil {
		return nil, nil, errors.New("waiting for signer x")
	}
	return f.key, f.chain, nil
}

func (f *fakeCerts) Forget(uid types.UID) { f.forgot = append(f.forgot, uid) }

// TestProjectedPodCertificate: the volume waits for the issued credentials,
// then holds them in the files the source names (the bundle is the key,
// then the chain); the pod's teardown forgets them.
func TestProjectedPodCertificate(t *testing.T) {
	e := newTestEnv(t)
	certs := &fakeCerts{}
	e.m.cfg.PodCertificates = certs
	pod := testPod(v1.Volume{Name: "pc", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{DefaultMode: int32p(0644),
		Sources: []v1.VolumeProjection{
			{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{
				{Path: "namespace", FieldRef: &v1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
			{PodCertificate: &v1.PodCertificateProjection{SignerName: "x", KeyType: "ED25519",
				CredentialBundlePath: "bundle.pem", KeyPath: "key.pem", CertificateChainPath: "chain.pem"}},
		}}}})
	ready, errs := e.m.SetUpPod(context.Background(), pod)
	if ready || len(errs) != 1 || errs[0].Error() != `MountVolume.SetUp failed for volume "pc" : waiting for signer x` {
		t.Fatalf("before issuance: ready=%v errs=%v", ready, errs)
	}
	certs.key, certs.chain = []byte("KEY\n"), []byte("CHAIN\n")
	e.setUp(pod)
	dir := e.volumeDir(pod, projectedPlugin, "pc")
	if e.read(dir, "bundle.pem") != "KEY\nCHAIN\n" || e.read(dir, "key.pem") != "KEY\n" || e.read(dir, "chain.pem") != "CHAIN\n" {
		t.Errorf("bundle %q key %q chain %q", e.read(dir, "bundle.pem"), e.read(dir, "key.pem"), e.read(dir, "chain.pem"))
	}
	if certs.asked[0] != "pc/1" {
		t.Errorf("asked for %v; want the volume and the source's index", certs.asked)
	}
	if err := e.m.TearDownPod(pod.UID); err != nil {
		t.Fatal(err)
	}
	if len(certs.forgot) != 1 || certs.forgot[0] != pod.UID {
		t.Errorf("forgot %v after the teardown", certs.forgot)
	}
}
