package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	certificatesv1 "k8s.io/api/certificates/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	certutil "k8s.io/client-go/util/cert"
)

// testClusterTrustBundle: a projected volume holds the anchors of a
// ClusterTrustBundle by name and of a signer's bundles by label selector,
// follows an update of a bundle, and a pod whose required bundle does not
// exist waits with the kubelet's FailedMount event.
func (v *volumesEnv) testClusterTrustBundle(t *testing.T) {
	ctbs := framework.Get(t).Client.CertificatesV1().ClusterTrustBundles()
	signer := "example.com/" + v.ns
	prefix := strings.ReplaceAll(signer, "/", ":") + ":"
	a, b, c := testCAPEM(t, "a"), testCAPEM(t, "b"), testCAPEM(t, "c")
	for _, ctb := range []*certificatesv1.ClusterTrustBundle{
		{ObjectMeta: metav1.ObjectMeta{Name: v.ns + "-byname"}, Spec: certificatesv1.ClusterTrustBundleSpec{TrustBundle: a}},
		{ObjectMeta: metav1.ObjectMeta{Name: prefix + "live", Labels: map[string]string{"live": "true"}},
			Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: b}},
		{ObjectMeta: metav1.ObjectMeta{Name: prefix + "dead", Labels: map[string]string{"live": "false"}},
			Spec: certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: c}},
	} {
		if _, err := ctbs.Create(context.Background(), ctb, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create ClusterTrustBundle %s: %v", ctb.Name, err)
		}
		name := ctb.Name
		t.Cleanup(func() { _ = ctbs.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	byName := v.ns + "-byname"
	vol := v1.Volume{Name: "ctb", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
		{ClusterTrustBundle: &v1.ClusterTrustBundleProjection{Name: &byName, Path: "by-name.pem"}},
		{ClusterTrustBundle: &v1.ClusterTrustBundleProjection{SignerName: &signer, Path: "live.pem",
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"live": "true"}}}},
	}}}}
	p := v.pod("ctb", []v1.Volume{vol}, v1.VolumeMount{Name: "ctb", MountPath: "/etc/ctb"})
	v.run(t, p)
	v.expect(t, p.Name, "cat /etc/ctb/by-name.pem", strings.TrimSpace(a))
	v.expect(t, p.Name, "cat /etc/ctb/live.pem", strings.TrimSpace(b))

	cur, err := ctbs.Get(context.Background(), byName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cur.Spec.TrustBundle = c
	if _, err := ctbs.Update(context.Background(), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 3*time.Minute, "the bundle's new anchors in the volume", func() (bool, error) {
		out, err := v.shE(p.Name, "main", "cat /etc/ctb/by-name.pem")
		return out == strings.TrimSpace(c), err
	})

	missing := "no-such-bundle"
	bad := v.pod("ctb-missing", []v1.Volume{{Name: "ctb", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
		Sources: []v1.VolumeProjection{{ClusterTrustBundle: &v1.ClusterTrustBundleProjection{Name: &missing, Path: "x.pem"}}}}}}},
		v1.VolumeMount{Name: "ctb", MountPath: "/etc/ctb"})
	framework.CreatePod(t, bad)
	framework.Eventually(t, time.Minute, "a FailedMount event naming the missing bundle", func() (bool, error) {
		return hasEvent(t, v.ns, bad.Name, "FailedMount", `MountVolume.SetUp failed for volume "ctb" : while getting ClusterTrustBundle: clustertrustbundle.certificates.k8s.io "no-such-bundle" not found`), nil
	})
	if got := framework.WaitForPod(t, v.ns, bad.Name, 10*time.Second, func(*v1.Pod) bool { return true }); got.Status.Phase != v1.PodPending {
		t.Errorf("a pod whose required bundle is missing is %s, want Pending", got.Status.Phase)
	}
}

// testCAPEM is a self-signed CA certificate, PEM.
func testCAPEM(t *testing.T, cn string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: cn}, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}))
}
