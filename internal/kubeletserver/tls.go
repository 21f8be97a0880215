// Package kubeletserver secures the node's kubelet port: the serving
// certificate, client-certificate verification, and webhook authn/authz.
package kubeletserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"time"

	"k8s.io/client-go/kubernetes"
)

// TLSOptions select where the serving certificate comes from.
type TLSOptions struct {
	CertFile, KeyFile string
	NodeName, NodeIP  string
	// Bootstrap requests the serving certificate from the cluster (signer
	// kubernetes.io/kubelet-serving) and renews it before it expires; the
	// pair in CertFile/KeyFile, if any, serves until the first is issued.
	Bootstrap bool
	Client    kubernetes.Interface
	// CertDir keeps the issued certificates across restarts.
	CertDir string
}

// CertSource says where the serving certificate came from.
type CertSource string

const (
	CertFromFiles      CertSource = "files"
	CertFromCluster    CertSource = "cluster"
	CertFromSelfSigned CertSource = "self-signed"
)

// TLSConfig builds the server's TLS config. Client certificates are asked
// for but verified by the authenticator against --client-ca-file (re-read
// when it changes), as on the kubelet, so a certificate from another CA gets
// 401 and bearer tokens work without one. The cipher suites are Go's
// defaults, as on a kubelet without --tls-cipher-suites.
func TLSConfig(ctx context.Context, o TLSOptions) (*tls.Config, CertSource, error) {
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS12,
		ClientAuth: tls.RequestClientCert,
	}
	switch {
	case o.Bootstrap:
		m, err := servingCertManager(ctx, o)
		if err != nil {
			return nil, "", err
		}
		cfg.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			if c := m.Current(); c != nil {
				return c, nil
			}
			return nil, fmt.Errorf("no serving certificate available for the kubelet")
		}
		return cfg, CertFromCluster, nil
	case o.CertFile != "" || o.KeyFile != "":
		pair, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, "", fmt.Errorf("loading --tls-cert-file/--tls-private-key-file: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
		return cfg, CertFromFiles, nil
	default:
		pair, err := SelfSigned(o.NodeName, o.NodeIP)
		if err != nil {
			return nil, "", err
		}
		cfg.Certificates = []tls.Certificate{pair}
		return cfg, CertFromSelfSigned, nil
	}
}

// SelfSigned makes a throw-away serving certificate for the node.
func SelfSigned(nodeName, nodeIP string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: nodeName + "@" + fmt.Sprint(time.Now().Unix())},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().AddDate(1, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{nodeName},
	}
	if ip := net.ParseIP(nodeIP); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
