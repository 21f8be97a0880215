package kubeletserver

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/runlet/runlet/internal/polltest"
)

// testCA is a CA and a client certificate it signed.
type testCA struct {
	pem    []byte
	client *x509.Certificate
}

func newTestCA(t *testing.T, name, clientCN string) testCA {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	ckey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	cTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: clientCN, Organization: []string{"system:masters"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	cDER, err := x509.CreateCertificate(rand.Reader, cTmpl, caCert, &ckey.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	client, _ := x509.ParseCertificate(cDER)
	return testCA{pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), client: client}
}

func withClientCert(c *x509.Certificate) *http.Request {
	r, _ := http.NewRequest(http.MethodGet, "https://node/containerLogs/ns/p/c", nil)
	r.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{c}}
	return r
}

func authenticates(a authenticator.Request, c *x509.Certificate) bool {
	resp, ok, err := a.AuthenticateRequest(withClientCert(c))
	return err == nil && ok && resp.User.GetName() == c.Subject.CommonName
}

func clientCAConfigMap(bundle []byte) *v1.ConfigMap {
	return &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ClientCANamespace, Name: ClientCAConfigMap},
		Data:       map[string]string{ClientCAKey: string(bundle), "requestheader-client-ca-file": "unrelated"},
	}
}

// Without --client-ca-file, the apiserver's client CA comes from the
// ConfigMap aggregated API servers read, and a rotation is followed.
func TestClientCAFromTheCluster(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := newTestCA(t, "cluster-ca-1", "kube-apiserver-kubelet-client")
	second := newTestCA(t, "cluster-ca-2", "kube-apiserver-kubelet-client-2")
	client := fake.NewSimpleClientset(clientCAConfigMap(first.pem))
	seen := make(chan []byte, 10)
	authn, err := newAuthenticator(ctx, client, AuthOptions{OnClientCAChange: func(b []byte) { seen <- b }})
	if err != nil {
		t.Fatal(err)
	}
	polltest.Eventually(t, 30*time.Second, "the first client CA", func() bool { return authenticates(authn, first.client) })
	if got := <-seen; string(got) != string(first.pem) {
		t.Errorf("listener got %q, want the first CA", got)
	}
	if authenticates(authn, second.client) {
		t.Fatal("a certificate of another CA was accepted")
	}

	cm := clientCAConfigMap(second.pem)
	if _, err := client.CoreV1().ConfigMaps(ClientCANamespace).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	polltest.Eventually(t, 30*time.Second, "the rotated client CA", func() bool { return authenticates(authn, second.client) })
	if authenticates(authn, first.client) {
		t.Error("the replaced CA still authenticates")
	}
}

// --client-ca-file wins over the cluster's CA.
func TestClientCAFileOverridesTheCluster(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cluster := newTestCA(t, "cluster-ca", "from-cluster")
	file := newTestCA(t, "file-ca", "from-file")
	path := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(path, file.pem, 0o600); err != nil {
		t.Fatal(err)
	}
	client := fake.NewSimpleClientset(clientCAConfigMap(cluster.pem))
	authn, err := newAuthenticator(ctx, client, AuthOptions{ClientCAFile: path})
	if err != nil {
		t.Fatal(err)
	}
	if !authenticates(authn, file.client) {
		t.Fatal("a certificate of --client-ca-file was refused")
	}
	if authenticates(authn, cluster.client) {
		t.Error("a certificate of the cluster's CA was accepted although --client-ca-file was given")
	}
	if got := len(client.Actions()); got != 0 {
		t.Errorf("with --client-ca-file runlet still asked the apiserver %d times", got)
	}
}

// No ConfigMap (or no key in it): client certificates are refused, and
// nothing fails: bearer tokens still authenticate.
func TestClientCAMissingRefusesCertificates(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ca := newTestCA(t, "ca", "someone")
	authn, err := newAuthenticator(ctx, fake.NewSimpleClientset(), AuthOptions{TokenWebhook: true})
	if err != nil {
		t.Fatal(err)
	}
	if authenticates(authn, ca.client) {
		t.Error("a client certificate was accepted with no CA known")
	}
}
