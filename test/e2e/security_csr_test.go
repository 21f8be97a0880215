package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSecurityBootstrapServingCert: with --bootstrap-serving-cert and no
// certificate files, runlet asks the cluster for a kubelet-serving
// certificate, serves nothing until it is approved (the local control plane
// approves nothing itself), then serves the certificate the
// kube-controller-manager signed and keeps it in its root dir.
func TestSecurityBootstrapServingCert(t *testing.T) {
	t.Parallel()
	c := framework.Get(t)
	rl := framework.StartRunlet(t, framework.RunletOptions{
		ExtraArgs: []string{"--bootstrap-serving-cert", "--tls-cert-file=", "--tls-private-key-file="},
	})
	cn := "system:node:" + rl.NodeName
	var csr *certificatesv1.CertificateSigningRequest
	framework.Eventually(t, 60*time.Second, "runlet's kubelet-serving CSR", func() (bool, error) {
		var err error
		csr, err = pendingCSR(c, certificatesv1.KubeletServingSignerName, cn, "")
		return csr != nil, err
	})
	t.Cleanup(func() {
		_ = c.Client.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), csr.Name, metav1.DeleteOptions{})
	})
	if _, err := servingCert(rl); err == nil {
		t.Error("runlet served a certificate before its CSR was approved")
	}
	mustKubectl(t, "certificate", "approve", csr.Name)

	var leaf *x509.Certificate
	framework.Eventually(t, 60*time.Second, "the signed serving certificate", func() (bool, error) {
		l, err := servingCert(rl)
		leaf = l
		return err == nil && l.Subject.CommonName == cn, nil
	})
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: caPool(t), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		t.Errorf("serving certificate does not chain to the cluster CA: %v", err)
	}
	if leaf.VerifyHostname("127.0.0.1") != nil || leaf.VerifyHostname(rl.NodeName) != nil {
		t.Errorf("serving certificate SANs %v %v; want the node IP and name", leaf.IPAddresses, leaf.DNSNames)
	}
	if _, err := os.Stat(filepath.Join(rl.RootDir, "pki", "kubelet-server-current.pem")); err != nil {
		t.Errorf("issued certificate not kept for restarts: %v", err)
	}
	// The node keeps working behind its new certificate.
	apiserverCert := loadPair(t, filepath.Join(c.PKIDir, "apiserver-kubelet-client.crt"), filepath.Join(c.PKIDir, "apiserver-kubelet-client.key"))
	if code, body, err := kubeletGet(t, rl, "/pods", "", &apiserverCert); err != nil || code != 200 {
		t.Errorf("GET /pods with the apiserver's certificate: %d %q, %v", code, body, err)
	}
}

// pendingCSR finds a CSR to signer whose subject is cn, that nobody has approved or denied yet, other
// than the one named skip.
func pendingCSR(c *framework.Cluster, signer, cn, skip string) (*certificatesv1.CertificateSigningRequest, error) {
	list, err := c.Client.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range list.Items {
		csr := &list.Items[i]
		if csr.Name == skip || csr.Spec.SignerName != signer || len(csr.Status.Conditions) > 0 {
			continue
		}
		block, _ := pem.Decode(csr.Spec.Request)
		if block == nil {
			continue
		}
		req, err := x509.ParseCertificateRequest(block.Bytes)
		if err == nil && req.Subject.CommonName == cn {
			return csr, nil
		}
	}
	return nil, nil
}

// servingCert returns the certificate runlet's kubelet port presents.
func servingCert(rl *framework.Runlet) (*x509.Certificate, error) {
	conn, err := tls.Dial("tcp", rl.KubeletURL()[len("https://"):], &tls.Config{InsecureSkipVerify: true}) // #nosec: inspected, then verified by the caller
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}
