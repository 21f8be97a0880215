package clientcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

// certPEM makes a self-signed client certificate valid from notBefore to
// notAfter, and its key, in PEM.
func certPEM(t *testing.T, notBefore, notAfter time.Time) (cert, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "system:node:n1", Organization: []string{"system:nodes"}},
		NotBefore: notBefore, NotAfter: notAfter, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

func writeFile(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const bootstrapKubeconfig = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443", certificate-authority-data: Q0EK}}]
users: [{name: u, user: {token: abcdef.0123456789abcdef}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`

// A node kubeconfig whose certificate is still valid is used as it is: the
// bootstrap credential is not even read.
func TestLoadClientConfigKeepsAValidKubeconfig(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	cert, key := certPEM(t, now.Add(-time.Hour), now.Add(time.Hour))
	pemPath := writeFile(t, filepath.Join(dir, "client.pem"), string(cert)+string(key))
	kc := writeFile(t, filepath.Join(dir, "kubeconfig"), `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://10.0.0.1:6443"}}]
users: [{name: u, user: {client-certificate: `+pemPath+`, client-key: `+pemPath+`}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`)
	o := Options{Kubeconfig: kc, BootstrapKubeconfig: filepath.Join(dir, "missing"), CertDir: filepath.Join(dir, "pki"), NodeName: "n1"}
	certCfg, nodeCfg, err := loadClientConfig(o, now)
	if err != nil {
		t.Fatal(err)
	}
	if certCfg.Host != "https://10.0.0.1:6443" || nodeCfg.CertFile != pemPath {
		t.Errorf("got host %q cert %q, want the kubeconfig's", certCfg.Host, nodeCfg.CertFile)
	}
	// Expired: the bootstrap credential is needed, and is missing.
	if _, _, err := loadClientConfig(o, now.Add(2*time.Hour)); err == nil || !strings.Contains(err.Error(), "--bootstrap-kubeconfig") {
		t.Errorf("expired certificate, no bootstrap kubeconfig: err = %v, want one naming --bootstrap-kubeconfig", err)
	}
}

// Without a valid kubeconfig, the bootstrap credential asks, and the node's
// kubeconfig is written to point at the cert dir's current certificate,
// with the bootstrap kubeconfig's server and CA, readable by root only.
func TestLoadClientConfigBootstraps(t *testing.T) {
	dir := t.TempDir()
	o := Options{Kubeconfig: filepath.Join(dir, "node", "kubeconfig"), BootstrapKubeconfig: writeFile(t, filepath.Join(dir, "boot"), bootstrapKubeconfig),
		CertDir: filepath.Join(dir, "pki"), NodeName: "n1"}
	certCfg, nodeCfg, err := loadClientConfig(o, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if certCfg.BearerToken != "abcdef.0123456789abcdef" || nodeCfg.BearerToken != "" {
		t.Errorf("certificate requests must use the token, the node's own requests must not: %q, %q", certCfg.BearerToken, nodeCfg.BearerToken)
	}
	current := filepath.Join(o.CertDir, "kubelet-client-current.pem")
	if nodeCfg.CertFile != current || nodeCfg.KeyFile != current {
		t.Errorf("node config uses %q/%q, want %q", nodeCfg.CertFile, nodeCfg.KeyFile, current)
	}
	written, err := os.ReadFile(o.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"server: https://127.0.0.1:6443", "certificate-authority-data: Q0EK", "client-certificate: " + current} {
		if !strings.Contains(string(written), want) {
			t.Errorf("written kubeconfig lacks %q:\n%s", want, written)
		}
	}
	if strings.Contains(string(written), "0123456789abcdef") {
		t.Errorf("the node's kubeconfig holds the bootstrap token:\n%s", written)
	}
	if st, _ := os.Stat(o.Kubeconfig); st.Mode().Perm() != 0o600 {
		t.Errorf("kubeconfig mode %v, want 0600", st.Mode().Perm())
	}
}

// A bootstrap kubeconfig that cannot be read, or that carries no
// credential, is refused naming the flag and the file.
func TestLoadClientConfigRefusesBadBootstrap(t *testing.T) {
	dir := t.TempDir()
	noCred := strings.Replace(bootstrapKubeconfig, "{token: abcdef.0123456789abcdef}", "{}", 1)
	for name, content := range map[string]string{"garbage": "{{{ not yaml", "no credential": noCred, "missing": ""} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if content != "" {
			writeFile(t, path, content)
		}
		o := Options{Kubeconfig: filepath.Join(dir, "kc"), BootstrapKubeconfig: path, CertDir: filepath.Join(dir, "pki"), NodeName: "n1"}
		_, _, err := loadClientConfig(o, time.Now())
		if err == nil || !strings.Contains(err.Error(), "--bootstrap-kubeconfig "+path) {
			t.Errorf("%s: err = %v, want one naming --bootstrap-kubeconfig %s", name, err, path)
		}
		if _, err := os.Stat(o.Kubeconfig); err == nil {
			t.Errorf("%s: a kubeconfig was written", name)
		}
	}
}

// A bootstrap kubeconfig with no server is the cluster runlet's pod runs in.
func TestLoadKubeconfigInClusterServer(t *testing.T) {
	path := writeFile(t, filepath.Join(t.TempDir(), "kc"), strings.Replace(bootstrapKubeconfig, `server: "https://127.0.0.1:6443", `, "", 1))
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	if _, err := LoadKubeconfig(path); err == nil || !strings.Contains(err.Error(), "KUBERNETES_SERVICE_HOST") {
		t.Errorf("outside a pod: err = %v, want one naming KUBERNETES_SERVICE_HOST", err)
	}
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
	t.Setenv("KUBERNETES_SERVICE_PORT", "443")
	cfg, err := LoadKubeconfig(path)
	if err != nil || cfg.Host != "https://10.96.0.1:443" {
		t.Errorf("in a pod: host %v, %v", cfg, err)
	}
}

// A certificate that is not valid yet by this host's clock says the clock is
// behind the cluster's: every expiry check here is off by as much.
func TestCheckClockWarnsOfSkew(t *testing.T) {
	log, hook := logtestHook()
	id := &Identity{log: log}
	now := time.Now()
	cert, key := certPEM(t, now.Add(5*time.Minute), now.Add(time.Hour))
	pair, err := tls.X509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	id.checkClock(&pair, now)
	if !hook.said("clock is behind") {
		t.Errorf("no warning of a clock behind the cluster's: %v", hook.messages())
	}
	hook.reset()
	id.checkClock(&pair, now.Add(10*time.Minute))
	if hook.said("clock is behind") || !hook.said("node client certificate ready") {
		t.Errorf("a certificate valid by the clock: %v", hook.messages())
	}
}

// recorder keeps what was logged.
type recorder struct {
	mu   sync.Mutex
	msgs []string
}

func (r *recorder) Levels() []logrus.Level { return logrus.AllLevels }
func (r *recorder) Fire(e *logrus.Entry) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, e.Message)
	return nil
}
func (r *recorder) messages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...)
}
func (r *recorder) reset() { r.mu.Lock(); defer r.mu.Unlock(); r.msgs = nil }
func (r *recorder) said(s string) bool {
	for _, m := range r.messages() {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

func logtestHook() (*logrus.Entry, *recorder) {
	l := logrus.New()
	l.SetOutput(io.Discard)
	r := &recorder{}
	l.AddHook(r)
	return logrus.NewEntry(l), r
}
