package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	certificatesv1 "k8s.io/api/certificates/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// testPodCertificate: a podCertificate projection gets a key and the chain
// a signer issued for it (here the test's own signer, as the upstream
// specs run theirs), in the credential bundle and in files of their own;
// a pod whose request is denied waits with the kubelet's FailedMount event.
func (v *volumesEnv) testPodCertificate(t *testing.T) {
	signerName := "example.com/" + v.ns
	issued := runTestSigner(t, v.ns, signerName, "pc-denied")
	vol := func(paths v1.PodCertificateProjection) []v1.Volume {
		paths.SignerName, paths.KeyType = signerName, "ECDSAP256"
		return []v1.Volume{{Name: "pc", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{
			Sources: []v1.VolumeProjection{{PodCertificate: &paths}}}}}}
	}
	p := v.pod("pc", vol(v1.PodCertificateProjection{CredentialBundlePath: "bundle.pem", KeyPath: "key.pem", CertificateChainPath: "chain.pem"}),
		v1.VolumeMount{Name: "pc", MountPath: "/etc/pc"})
	v.run(t, p)
	chain := strings.TrimSpace(issued.chainFor("pc"))
	if chain == "" {
		t.Fatal("the pod runs, but no certificate was issued to it")
	}
	v.expect(t, p.Name, "cat /etc/pc/chain.pem", chain)
	key := v.sh(t, p.Name, "main", "cat /etc/pc/key.pem")
	if !strings.HasPrefix(key, "-----BEGIN PRIVATE KEY-----") {
		t.Errorf("key.pem = %q; want a PKCS#8 private key", key)
	}
	v.expect(t, p.Name, "cat /etc/pc/bundle.pem", key+"\n"+chain)

	denied := v.pod("pc-denied", vol(v1.PodCertificateProjection{CredentialBundlePath: "bundle.pem"}), v1.VolumeMount{Name: "pc", MountPath: "/etc/pc"})
	framework.CreatePod(t, denied)
	framework.Eventually(t, time.Minute, "a FailedMount event saying the request was denied", func() (bool, error) {
		return hasEvent(t, v.ns, denied.Name, "FailedMount", `MountVolume.SetUp failed for volume "pc" : PodCertificateRequest `+v.ns+"/") &&
			hasEvent(t, v.ns, denied.Name, "FailedMount", `was denied, reason="Test"`), nil
	})
	if got := framework.WaitForPod(t, v.ns, denied.Name, 10*time.Second, func(*v1.Pod) bool { return true }); got.Status.Phase != v1.PodPending {
		t.Errorf("a pod whose certificate was denied is %s, want Pending", got.Status.Phase)
	}
}

// testSigner issues, with a CA of its own, the requests for signerName in
// namespace ns, or denies those of pod deny.
type testSigner struct {
	mu     sync.Mutex
	chains map[string]string // pod name → the chain issued
}

func (s *testSigner) chainFor(pod string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.chains[pod]
}

func runTestSigner(t *testing.T, ns, signerName, deny string) *testSigner {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test signer"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	pcrs := framework.Get(t).Client.CertificatesV1().PodCertificateRequests(ns)
	w, err := pcrs.Watch(context.Background(), metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.signerName", signerName).String()})
	if err != nil {
		t.Fatalf("watch PodCertificateRequests: %v", err)
	}
	t.Cleanup(w.Stop)
	s := &testSigner{chains: map[string]string{}}
	go func() {
		for ev := range w.ResultChan() {
			req, ok := ev.Object.(*certificatesv1.PodCertificateRequest)
			if !ok || len(req.Status.Conditions) > 0 {
				continue
			}
			if err := s.answer(pcrs, req, deny, ca, caKey); err != nil {
				t.Errorf("test signer: %v", err)
			}
		}
	}()
	return s
}

func (s *testSigner) answer(pcrs interface {
	UpdateStatus(context.Context, *certificatesv1.PodCertificateRequest, metav1.UpdateOptions) (*certificatesv1.PodCertificateRequest, error)
}, req *certificatesv1.PodCertificateRequest, deny string, ca *x509.Certificate, caKey *ecdsa.PrivateKey) error {
	req = req.DeepCopy()
	if req.Spec.PodName == deny {
		req.Status.Conditions = []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeDenied,
			Status: metav1.ConditionTrue, Reason: "Test", Message: "the test denies this pod", LastTransitionTime: metav1.Now()}}
		_, err := pcrs.UpdateStatus(context.Background(), req, metav1.UpdateOptions{})
		return err
	}
	csr, err := x509.ParseCertificateRequest(req.Spec.StubPKCS10Request)
	if err != nil {
		return err
	}
	notBefore := time.Now().Truncate(time.Second)
	notAfter := notBefore.Add(2 * time.Hour)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: req.Spec.PodName},
		NotBefore: notBefore, NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, leaf, ca, csr.PublicKey, caKey)
	if err != nil {
		return err
	}
	chain := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	req.Status = certificatesv1.PodCertificateRequestStatus{
		Conditions: []metav1.Condition{{Type: certificatesv1.PodCertificateRequestConditionTypeIssued,
			Status: metav1.ConditionTrue, Reason: "Issued", Message: "issued by the test", LastTransitionTime: metav1.Now()}},
		CertificateChain: chain,
		NotBefore:        &metav1.Time{Time: notBefore}, NotAfter: &metav1.Time{Time: notAfter},
		BeginRefreshAt: &metav1.Time{Time: notBefore.Add(time.Hour)},
	}
	if _, err := pcrs.UpdateStatus(context.Background(), req, metav1.UpdateOptions{}); err != nil {
		return err
	}
	s.mu.Lock()
	s.chains[req.Spec.PodName] = chain
	s.mu.Unlock()
	return nil
}
