package e2e

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// TestNodeIdentity runs a static pod and a pod using every volume kind and
// env source runlet supports while runlet holds its bootstrapped identity,
// then speaks as that identity (runlet's own kubeconfig and certificate, a
// user agent of the test's): the Node authorizer and NodeRestriction refuse
// it what they refuse a kubelet, and everything its pods need still works.
func TestNodeIdentity(t *testing.T) {
	t.Parallel()
	ns := framework.Namespace(t)
	manifests := t.TempDir()
	if err := os.WriteFile(filepath.Join(manifests, "static.yaml"), []byte(staticManifest(ns, "static")), 0o644); err != nil {
		t.Fatal(err)
	}
	rl := framework.StartRunlet(t, framework.RunletOptions{PodManifestPath: manifests})
	t.Cleanup(func() { stopStatic(t, manifests, ns, "static-"+rl.NodeName) })
	id := newIdentityEnv(t, ns, rl)
	app := id.runApp(t)
	mirror := waitMirror(t, ns, "static-"+rl.NodeName, rl.NodeName)

	t.Run("Subject", func(t *testing.T) { id.testSubject(t) })
	t.Run("Refused", func(t *testing.T) { id.testRefused(t) })
	t.Run("Allowed", func(t *testing.T) { id.testAllowed(t, app, mirror) })
	t.Run("PodsWork", func(t *testing.T) { id.testPodsWork(t, app) })
}

// stopStatic removes the static pod's manifest and waits until runlet has
// stopped it and deleted its mirror pod.
func stopStatic(t *testing.T, dir, ns, mirror string) {
	if err := os.Remove(filepath.Join(dir, "static.yaml")); err != nil {
		t.Error(err)
		return
	}
	framework.Eventually(t, 90*time.Second, "the static pod's mirror pod gone", func() (bool, error) {
		_, err := framework.Get(t).Client.CoreV1().Pods(ns).Get(context.Background(), mirror, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// identityEnv is the node under test, a second node it does not run, and
// objects that only that other node, or nobody, would need.
type identityEnv struct {
	ns, node, other, root string
	ca                    string // a ClusterTrustBundle's anchors, in the app pod
	signer                *testSigner
	admin                 kubernetes.Interface
	self                  kubernetes.Interface // runlet's own kubeconfig
}

const probeAgent = "e2e-identity-probe" // not runlet/…: the framework's audit check leaves these alone

func newIdentityEnv(t *testing.T, ns string, rl *framework.Runlet) *identityEnv {
	c := framework.Get(t)
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(rl.RootDir, "kubeconfig"))
	if err != nil {
		t.Fatalf("runlet's kubeconfig: %v", err)
	}
	cfg.UserAgent = probeAgent
	self, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	id := &identityEnv{ns: ns, node: rl.NodeName, other: framework.UniqueName(t, "other"), root: rl.RootDir, admin: c.Client, self: self}

	// The other node: a Node and its Lease, no kubelet behind them.
	if _, err := c.Client.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: id.other}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Client.CoreV1().Nodes().Delete(context.Background(), id.other, metav1.DeleteOptions{}) })
	leases := c.Client.CoordinationV1().Leases(v1.NamespaceNodeLease)
	holder := id.other
	if _, err := leases.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: id.other},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = leases.Delete(context.Background(), id.other, metav1.DeleteOptions{}) })
	elsewhere := framework.PodFor(id.other, ns, "elsewhere", framework.Sleeper("main"))
	elsewhere.Spec.NodeName = id.other
	framework.CreatePod(t, elsewhere)
	t.Cleanup(func() { framework.DeletePod(t, ns, "elsewhere", ptrTo(int64(0))) })

	// What the app pod uses, and the same kinds of objects that no pod of the node uses.
	for _, sa := range []string{"app-sa", "unused-sa"} {
		if _, err := c.Client.CoreV1().ServiceAccounts(ns).Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"app-config", "unused-config"} {
		createConfigMap(t, ns, name, map[string]string{"greeting": "hello"})
	}
	for _, name := range []string{"app-secret", "unused-secret"} {
		s := &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: map[string]string{"password": "s3cret"}}
		if _, err := c.Client.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	id.ca = testCAPEM(t, "identity")
	ctbs := c.Client.CertificatesV1().ClusterTrustBundles()
	ctb := &certificatesv1.ClusterTrustBundle{ObjectMeta: metav1.ObjectMeta{Name: ns + "-identity"}, Spec: certificatesv1.ClusterTrustBundleSpec{TrustBundle: id.ca}}
	if _, err := ctbs.Create(ctx, ctb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ctbs.Delete(context.Background(), ctb.Name, metav1.DeleteOptions{}) })
	id.signer = runTestSigner(t, ns, "example.com/"+ns, "")
	id.createClaim(t)
	return id
}

// createClaim creates claim "data", bound to a hostPath persistentVolume.
func (id *identityEnv) createClaim(t *testing.T) {
	ctx := context.Background()
	class, pvName := "manual", "pv-"+id.ns
	storage := v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pvName},
		Spec: v1.PersistentVolumeSpec{StorageClassName: class, AccessModes: []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce}, Capacity: storage,
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: t.TempDir()}}}}
	if _, err := id.admin.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = id.admin.CoreV1().PersistentVolumes().Delete(context.Background(), pvName, metav1.DeleteOptions{})
	})
	claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"},
		Spec: v1.PersistentVolumeClaimSpec{StorageClassName: &class, VolumeName: pvName, AccessModes: pv.Spec.AccessModes,
			Resources: v1.VolumeResourceRequirements{Requests: storage}}}
	if _, err := id.admin.CoreV1().PersistentVolumeClaims(id.ns).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// runApp runs pod "app": a web server whose env and volumes come from every
// source runlet supports, and waits until it is Ready.
func (id *identityEnv) runApp(t *testing.T) *v1.Pod {
	ref := func(name string) v1.LocalObjectReference { return v1.LocalObjectReference{Name: name} }
	field := func(path string) *v1.ObjectFieldSelector { return &v1.ObjectFieldSelector{FieldPath: path} }
	ctb, signer := id.ns+"-identity", "example.com/"+id.ns
	main := webServer("main")
	main.Command = []string{"sh", "-c", `echo "greeting=$GREETING"; echo identity-web > /www/index.html; exec httpd -f -p 8080 -h /www`}
	main.Env = []v1.EnvVar{
		{Name: "GREETING", ValueFrom: cmKeyRef("app-config", "greeting")},
		{Name: "PASSWORD", ValueFrom: secretKeyRef("app-secret", "password")},
		{Name: "POD_NAME", ValueFrom: &v1.EnvVarSource{FieldRef: field("metadata.name")}},
	}
	main.EnvFrom = []v1.EnvFromSource{
		{Prefix: "CM_", ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: ref("app-config")}},
		{Prefix: "S_", SecretRef: &v1.SecretEnvSource{LocalObjectReference: ref("app-secret")}},
	}
	p := framework.PodFor(id.node, id.ns, "app", main)
	p.Spec.ServiceAccountName = "app-sa"
	p.Spec.Volumes = []v1.Volume{
		{Name: "cfg", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: ref("app-config")}}},
		{Name: "sec", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "app-secret"}}},
		{Name: "info", VolumeSource: v1.VolumeSource{DownwardAPI: &v1.DownwardAPIVolumeSource{
			Items: []v1.DownwardAPIVolumeFile{{Path: "name", FieldRef: field("metadata.name")}}}}},
		{Name: "proj", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
			{ServiceAccountToken: &v1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptrTo(int64(3600))}},
			{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: ref("app-config")}},
			{Secret: &v1.SecretProjection{LocalObjectReference: ref("app-secret")}},
			{DownwardAPI: &v1.DownwardAPIProjection{Items: []v1.DownwardAPIVolumeFile{{Path: "name", FieldRef: field("metadata.name")}}}},
			{ClusterTrustBundle: &v1.ClusterTrustBundleProjection{Name: &ctb, Path: "ca.pem"}},
			{PodCertificate: &v1.PodCertificateProjection{SignerName: signer, KeyType: "ECDSAP256", CredentialBundlePath: "pc.pem"}},
		}}}},
		{Name: "www", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}},
		{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}},
	}
	for _, m := range []struct{ name, path string }{{"cfg", "/etc/cfg"}, {"sec", "/etc/sec"}, {"info", "/etc/info"},
		{"proj", "/etc/proj"}, {"www", "/www"}, {"data", "/data"}} {
		main.VolumeMounts = append(main.VolumeMounts, v1.VolumeMount{Name: m.name, MountPath: m.path})
	}
	p.Spec.Containers = []v1.Container{main}
	framework.CreatePod(t, p)
	return framework.WaitForPodReady(t, id.ns, "app", 3*time.Minute)
}

// testSubject: runlet's certificate and kubeconfig name system:node:<node>
// in system:nodes, and the apiserver agrees.
func (id *identityEnv) testSubject(t *testing.T) {
	pemPath := filepath.Join(id.root, "pki", "kubelet-client-current.pem")
	kc, err := clientcmd.LoadFromFile(filepath.Join(id.root, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	for name, auth := range kc.AuthInfos {
		if auth.ClientCertificate != pemPath || auth.ClientKey != pemPath {
			t.Errorf("kubeconfig user %s: cert %q, key %q; want both %s", name, auth.ClientCertificate, auth.ClientKey, pemPath)
		}
	}
	cert := firstCertificate(t, pemPath)
	want := "system:node:" + id.node
	if cert.Subject.CommonName != want || !slices.Equal(cert.Subject.Organization, []string{"system:nodes"}) {
		t.Errorf("certificate subject CN=%q O=%q; want CN=%q O=[system:nodes]", cert.Subject.CommonName, cert.Subject.Organization, want)
	}
	r, err := id.self.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("whoami: %v", err)
	}
	if u := r.Status.UserInfo; u.Username != want || !slices.Contains(u.Groups, "system:nodes") {
		t.Errorf("the apiserver sees %q in %v; want %q in system:nodes", u.Username, u.Groups, want)
	}
}

func firstCertificate(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for blk, rest := pem.Decode(b); blk != nil; blk, rest = pem.Decode(rest) {
		if blk.Type == "CERTIFICATE" {
			cert, err := x509.ParseCertificate(blk.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			return cert
		}
	}
	t.Fatalf("no certificate in %s", path)
	return nil
}

// testRefused: what the Node authorizer and NodeRestriction refuse a kubelet
// is refused to runlet's identity, with 403 Forbidden.
func (id *identityEnv) testRefused(t *testing.T) {
	ns, other := id.ns, id.other
	mergeLabel := []byte(`{"metadata":{"labels":{"identity-probe":"x"}}}`)
	refused := []struct {
		what string
		do   func(context.Context, kubernetes.Interface) error
	}{
		{"get a Secret no pod of the node uses", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().Secrets(ns).Get(ctx, "unused-secret", metav1.GetOptions{})
			return err
		}},
		{"get a ConfigMap no pod of the node uses", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().ConfigMaps(ns).Get(ctx, "unused-config", metav1.GetOptions{})
			return err
		}},
		{"list the namespace's Secrets", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
			return err
		}},
		{"list all Secrets", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
			return err
		}},
		{"get another Node", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().Nodes().Get(ctx, other, metav1.GetOptions{})
			return err
		}},
		{"patch another Node", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().Nodes().Patch(ctx, other, types.MergePatchType, mergeLabel, metav1.PatchOptions{})
			return err
		}},
		{"update another Node", func(ctx context.Context, c kubernetes.Interface) error {
			n, err := id.admin.CoreV1().Nodes().Get(ctx, other, metav1.GetOptions{})
			if err != nil {
				return err
			}
			n.Labels = map[string]string{"identity-probe": "x"}
			_, err = c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
			return err
		}},
		{"patch another Node's status", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().Nodes().Patch(ctx, other, types.MergePatchType, []byte(`{"status":{"phase":"Running"}}`), metav1.PatchOptions{}, "status")
			return err
		}},
		{"patch another Node's Lease", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoordinationV1().Leases(v1.NamespaceNodeLease).Patch(ctx, other, types.MergePatchType, mergeLabel, metav1.PatchOptions{})
			return err
		}},
		{"update another Node's Lease", func(ctx context.Context, c kubernetes.Interface) error {
			l, err := id.admin.CoordinationV1().Leases(v1.NamespaceNodeLease).Get(ctx, other, metav1.GetOptions{})
			if err != nil {
				return err
			}
			l.Spec.HolderIdentity = &id.node
			_, err = c.CoordinationV1().Leases(v1.NamespaceNodeLease).Update(ctx, l, metav1.UpdateOptions{})
			return err
		}},
		{"take its own taint off (NodeRestriction)", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().Nodes().Patch(ctx, id.node, types.MergePatchType, []byte(`{"spec":{"taints":null}}`), metav1.PatchOptions{})
			return err
		}},
		{"give itself a node-role label (NodeRestriction)", func(ctx context.Context, c kubernetes.Interface) error {
			patch := []byte(`{"metadata":{"labels":{"node-role.kubernetes.io/control-plane":""}}}`)
			_, err := c.CoreV1().Nodes().Patch(ctx, id.node, types.MergePatchType, patch, metav1.PatchOptions{})
			return err
		}},
		{"get a pod bound to another node", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().Pods(ns).Get(ctx, "elsewhere", metav1.GetOptions{})
			return err
		}},
		{"list pods without its spec.nodeName selector", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			return err
		}},
		{"create a pod (not a mirror pod) bound to itself", func(ctx context.Context, c kubernetes.Interface) error {
			p := framework.PodFor(id.node, ns, "smuggled", framework.Sleeper("main"))
			p.Spec.NodeName = id.node
			_, err := c.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
			return err
		}},
		{"create a mirror pod that uses a Secret", func(ctx context.Context, c kubernetes.Interface) error {
			n, err := c.CoreV1().Nodes().Get(ctx, id.node, metav1.GetOptions{})
			if err != nil {
				return err
			}
			p := framework.PodFor(id.node, ns, "mirror-with-secret", framework.Sleeper("main"))
			p.Spec.NodeName = id.node
			p.Annotations = map[string]string{v1.MirrorPodAnnotationKey: "fake"}
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "Node", Name: id.node, UID: n.UID, Controller: ptrTo(true)}}
			p.Spec.Volumes = []v1.Volume{{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "unused-secret"}}}}
			_, err = c.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
			return err
		}},
		{"create a token for a ServiceAccount no pod of the node runs as", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "unused-sa", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
			return err
		}},
		{"create a token for its pod's ServiceAccount not bound to the pod (NodeRestriction)", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().ServiceAccounts(ns).CreateToken(ctx, "app-sa", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
			return err
		}},
	}
	for _, r := range refused {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := r.do(ctx, id.self)
		cancel()
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s: got %v; want 403 Forbidden", r.what, err)
		} else {
			t.Logf("%s: %v", r.what, err)
		}
	}
}

// testAllowed: what its pods need, runlet's identity gets.
func (id *identityEnv) testAllowed(t *testing.T, app, mirror *v1.Pod) {
	ctx := context.Background()
	allowed := []struct {
		what string
		do   func(context.Context, kubernetes.Interface) error
	}{
		{"get its pod's Secret", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().Secrets(id.ns).Get(ctx, "app-secret", metav1.GetOptions{})
			return err
		}},
		{"get its pod's ConfigMap", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().ConfigMaps(id.ns).Get(ctx, "app-config", metav1.GetOptions{})
			return err
		}},
		{"get its pod's claim", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().PersistentVolumeClaims(id.ns).Get(ctx, "data", metav1.GetOptions{})
			return err
		}},
		{"get its own Node and Lease", func(ctx context.Context, c kubernetes.Interface) error {
			if _, err := c.CoreV1().Nodes().Get(ctx, id.node, metav1.GetOptions{}); err != nil {
				return err
			}
			_, err := c.CoordinationV1().Leases(v1.NamespaceNodeLease).Get(ctx, id.node, metav1.GetOptions{})
			return err
		}},
		{"get its pod", func(ctx context.Context, c kubernetes.Interface) error {
			_, err := c.CoreV1().Pods(id.ns).Get(ctx, "app", metav1.GetOptions{})
			return err
		}},
		{"create a token for its pod's ServiceAccount, bound to the pod", func(ctx context.Context, c kubernetes.Interface) error {
			tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
				BoundObjectRef: &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: "app", UID: app.UID}}}
			_, err := c.CoreV1().ServiceAccounts(id.ns).CreateToken(ctx, "app-sa", tr, metav1.CreateOptions{})
			return err
		}},
	}
	for _, a := range allowed {
		if err := a.do(ctx, id.self); err != nil {
			t.Errorf("%s: %v", a.what, err)
		}
	}
	pods, err := id.self.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", id.node).String()})
	if err != nil {
		t.Fatalf("list its pods: %v", err)
	}
	var names []string
	for _, p := range pods.Items {
		names = append(names, p.Name)
	}
	if !slices.Contains(names, app.Name) || !slices.Contains(names, mirror.Name) {
		t.Errorf("its pods: %v; want %s and the mirror pod %s among them", names, app.Name, mirror.Name)
	}
}

// testPodsWork: through the apiserver, as a user: the app pod's env and
// volumes hold what their sources say; logs, exec and port-forward work.
func (id *identityEnv) testPodsWork(t *testing.T, app *v1.Pod) {
	v := &volumesEnv{node: id.node, ns: id.ns, root: id.root}
	v.expect(t, "app", `echo "$GREETING $PASSWORD $CM_greeting $S_password $POD_NAME"`, "hello s3cret hello s3cret app")
	v.expect(t, "app", "cat /etc/cfg/greeting /etc/sec/password /etc/info/name", "hellos3cretapp")
	v.expect(t, "app", "cat /etc/proj/greeting /etc/proj/password /etc/proj/name", "hellos3cretapp")
	v.expect(t, "app", "cat /etc/proj/ca.pem", strings.TrimSpace(id.ca))
	if chain := strings.TrimSpace(id.signer.chainFor("app")); chain == "" {
		t.Error("the pod runs, but the test signer issued no certificate to it")
	} else if got := v.sh(t, "app", "main", "cat /etc/proj/pc.pem"); !strings.HasSuffix(got, chain) {
		t.Errorf("pc.pem does not end with the issued chain:\n%s", got)
	}
	v.expect(t, "app", "echo kept > /data/f && cat /data/f && cat /www/index.html", "kept\nidentity-web")

	token := v.sh(t, "app", "main", "cat /etc/proj/token")
	review, err := id.admin.AuthenticationV1().TokenReviews().Create(context.Background(),
		&authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if want := "system:serviceaccount:" + id.ns + ":app-sa"; err != nil || !review.Status.Authenticated || review.Status.User.Username != want {
		t.Errorf("the projected token: %v %+v; want it to authenticate as %s", err, review, want)
	}

	if out := framework.Kubectl(t, "logs", "-n", id.ns, "app"); !strings.Contains(out, "greeting=hello") {
		t.Errorf("kubectl logs: %q; want greeting=hello", out)
	}
	resp, err := http.Get(portForward(t, id.ns, "app", 8080) + "/")
	if err != nil {
		t.Fatalf("through kubectl port-forward: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.TrimSpace(string(body)) != "identity-web" {
		t.Errorf("through kubectl port-forward: %q; want identity-web", body)
	}
	if app.Status.Phase != v1.PodRunning {
		t.Errorf("app is %s", app.Status.Phase)
	}
}
