package kubeletserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/certificate"
)

// servingCertManager is the kubelet's server certificate manager
// (--rotate-server-certificates): a CSR for system:node:<name> in group
// system:nodes, with the node's name and IP as SANs, to the signer
// kubernetes.io/kubelet-serving. Nothing approves such CSRs by default; an
// operator or an approver controller must. The manager renews the
// certificate at 70-90 % of its lifetime and keeps it in CertDir
// (kubelet-server-current.pem), so a restart does not ask again.
func servingCertManager(ctx context.Context, o TLSOptions) (certificate.Manager, error) {
	if o.Client == nil || o.CertDir == "" {
		return nil, fmt.Errorf("bootstrapping the serving certificate needs a client and a certificate directory")
	}
	store, err := certificate.NewFileStore("kubelet-server", o.CertDir, o.CertDir, o.CertFile, o.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("serving certificate store in %s: %w", o.CertDir, err)
	}
	m, err := certificate.NewManager(&certificate.Config{
		ClientsetFn:      func(*tls.Certificate) (kubernetes.Interface, error) { return o.Client, nil },
		Template:         servingCSRTemplate(o.NodeName, o.NodeIP),
		SignerName:       certificatesv1.KubeletServingSignerName,
		GetUsages:        certificate.DefaultKubeletServingGetUsages,
		CertificateStore: store,
		Name:             "kubelet-serving",
		Ctx:              &ctx,
	})
	if err != nil {
		return nil, fmt.Errorf("serving certificate manager: %w", err)
	}
	m.Start()
	return m, nil
}

// servingCSRTemplate is what the kube-controller-manager's kubelet-serving
// signer accepts: CN system:node:<name>, O system:nodes, DNS and IP SANs only.
func servingCSRTemplate(nodeName, nodeIP string) *x509.CertificateRequest {
	tmpl := &x509.CertificateRequest{
		Subject:  pkix.Name{CommonName: "system:node:" + nodeName, Organization: []string{"system:nodes"}},
		DNSNames: []string{nodeName},
	}
	if ip := net.ParseIP(nodeIP); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	}
	return tmpl
}
