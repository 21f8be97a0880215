package scale

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// signer is the control plane's CA (hack/cp-pki.sh's ca.crt and ca.key):
// it signs each hollow node a client certificate of its own,
// system:node:<name> in system:nodes, so that the apiserver's Node
// authorizer and NodeRestriction hold every node to its own objects, as in
// production. Signing them here spares the run 200 CSRs.
type signer struct {
	cert   *x509.Certificate
	key    crypto.Signer
	caPEM  []byte
	server string
}

func loadSigner(pkiDir, server string) (*signer, error) {
	caPEM, err := os.ReadFile(filepath.Join(pkiDir, "ca.crt"))
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(pkiDir, "ca.key"))
	if err != nil {
		return nil, err
	}
	cb, kb := pemBlock(caPEM), pemBlock(keyPEM)
	if cb == nil || kb == nil {
		return nil, errors.New("ca.crt or ca.key is not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := parseKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("ca.key: %w", err)
	}
	return &signer{cert: cert, key: key, caPEM: caPEM, server: server}, nil
}

func pemBlock(b []byte) *pem.Block {
	block, _ := pem.Decode(b)
	return block
}

// parseKey reads openssl's key: PKCS#8 (openssl 3) or PKCS#1 (older).
func parseKey(der []byte) (crypto.Signer, error) {
	if k, err := x509.ParsePKCS8PrivateKey(der); err == nil {
		if s, ok := k.(crypto.Signer); ok {
			return s, nil
		}
		return nil, errors.New("not a signing key")
	}
	return x509.ParsePKCS1PrivateKey(der)
}

// nodeKubeconfig writes dir/<node>.kubeconfig: the apiserver, its CA, and a
// fresh key with a certificate for system:node:<node>.
func (s *signer) nodeKubeconfig(dir, node string) (string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}},
		NotBefore:    time.Now().Add(-time.Minute), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, s.cert, key.Public(), s.key)
	if err != nil {
		return "", err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["scale"] = &clientcmdapi.Cluster{Server: s.server, CertificateAuthorityData: s.caPEM}
	cfg.AuthInfos[node] = &clientcmdapi.AuthInfo{
		ClientCertificateData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		ClientKeyData:         pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}
	cfg.Contexts["scale"] = &clientcmdapi.Context{Cluster: "scale", AuthInfo: node}
	cfg.CurrentContext = "scale"
	path := filepath.Join(dir, node+".kubeconfig")
	return path, clientcmd.WriteToFile(*cfg, path)
}
