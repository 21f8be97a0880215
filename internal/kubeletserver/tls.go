// Package kubeletserver secures the node's kubelet port: the serving
// certificate, client-certificate verification, and webhook authn/authz.
package kubeletserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
)

// TLSOptions select where the serving certificate comes from.
type TLSOptions struct {
	CertFile, KeyFile string
	ClientCAFile      string
	NodeName, NodeIP  string
}

// TLSConfig builds the server's TLS config. Client certificates are verified
// against the client CA when presented, but not required, so bearer tokens
// still work; a certificate from another CA fails the handshake.
func TLSConfig(o TLSOptions) (*tls.Config, bool, error) {
	cfg := &tls.Config{
		MinVersion:   tls.VersionTLS12,
		CipherSuites: nodeutil.DefaultServerCiphers(),
		ClientAuth:   tls.RequestClientCert,
	}
	selfSigned := false
	if o.CertFile != "" || o.KeyFile != "" {
		pair, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, false, fmt.Errorf("loading --tls-cert-file/--tls-private-key-file: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	} else {
		pair, err := SelfSigned(o.NodeName, o.NodeIP)
		if err != nil {
			return nil, false, err
		}
		cfg.Certificates, selfSigned = []tls.Certificate{pair}, true
	}
	if o.ClientCAFile != "" {
		pem, err := os.ReadFile(o.ClientCAFile)
		if err != nil {
			return nil, false, fmt.Errorf("reading --client-ca-file: %w", err)
		}
		cfg.ClientCAs = x509.NewCertPool()
		if !cfg.ClientCAs.AppendCertsFromPEM(pem) {
			return nil, false, fmt.Errorf("--client-ca-file %s holds no PEM certificate", o.ClientCAFile)
		}
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return cfg, selfSigned, nil
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
