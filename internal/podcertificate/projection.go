package podcertificate

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
)

// state is where a projection stands.
type state int

const (
	stateInitial state = iota // no request yet
	stateWait                 // a request is pending (a refresh, when chain is set)
	stateFresh                // issued; asked again at beginRefreshAt
	stateEnded                // denied or failed: final for the source
)

// projection is one podCertificate source's credentials and request.
type projection struct {
	mu    sync.Mutex
	pod   *v1.Pod
	src   v1.PodCertificateProjection
	state state

	key, chain     []byte // the issued credentials, PEM
	beginRefreshAt time.Time

	pending    string // the pending request's name
	pendingKey []byte // and the key it certifies
	abandonAt  time.Time

	reason, message string // why it ended
}

// credentials are the issued key and chain, or why there are none.
func (p *projection) credentials(signer string) ([]byte, []byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.state == stateEnded:
		return nil, nil, errors.New(p.message)
	case len(p.chain) > 0:
		return bytes.Clone(p.key), bytes.Clone(p.chain), nil
	case p.pending != "":
		return nil, nil, fmt.Errorf("waiting for signer %s to issue PodCertificateRequest %s/%s", signer, p.pod.Namespace, p.pending)
	}
	return nil, nil, fmt.Errorf("no certificate from signer %s yet: its PodCertificateRequest is being made", signer)
}

// newKeyAndProof makes a private key of keyType (PKCS#8 PEM) and the stub
// PKCS#10 request that proves its possession.
func newKeyAndProof(keyType string) ([]byte, []byte, error) {
	var key crypto.Signer
	var err error
	switch keyType {
	case "RSA3072":
		key, err = rsa.GenerateKey(rand.Reader, 3072)
	case "RSA4096":
		key, err = rsa.GenerateKey(rand.Reader, 4096)
	case "ECDSAP256":
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "ECDSAP384":
		key, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	case "ECDSAP521":
		key, err = ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	case "ED25519":
		_, key, err = ed25519.GenerateKey(rand.Reader)
	default:
		return nil, nil, fmt.Errorf("unknown key type %q", keyType)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("generating a %s key: %w", keyType, err)
	}
	proof, err := x509.CreateCertificateRequest(rand.Reader, &x509.CertificateRequest{}, key)
	if err != nil {
		return nil, nil, fmt.Errorf("making the stub PKCS#10 request: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), proof, nil
}

// cleanChain keeps the chain's certificates only, without headers or text
// between them.
func cleanChain(in []byte) []byte {
	var out bytes.Buffer
	for rest := in; ; {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return out.Bytes()
		}
		_ = pem.Encode(&out, &pem.Block{Type: "CERTIFICATE", Bytes: b.Bytes})
	}
}
