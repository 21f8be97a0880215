package join

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	tokenjws "k8s.io/cluster-bootstrap/token/jws"
)

const (
	testToken     = "abcdef.0123456789abcdef"
	testTokenID   = "abcdef"
	testSecret    = "0123456789abcdef"
	clusterInfoAt = "/api/v1/namespaces/kube-public/configmaps/cluster-info"
)

// fakeCluster is an apiserver that serves kube-public/cluster-info as a
// kubeadm control plane does: a kubeconfig with its server and CA, signed
// for the tokens in jws.
type fakeCluster struct {
	srv        *httptest.Server
	caPEM      []byte
	kubeconfig string
	mu         sync.Mutex
	jws        map[string]string // token id -> detached signature
	requests   atomic.Int32
	// second, when set, is the kubeconfig served from the second request on.
	second string
}

func newFakeCluster(t *testing.T) *fakeCluster {
	t.Helper()
	c := &fakeCluster{jws: map[string]string{}}
	c.srv = httptest.NewTLSServer(http.HandlerFunc(c.serve))
	t.Cleanup(c.srv.Close)
	// httptest's certificate is its own CA: what cluster-info hands out.
	c.caPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.srv.Certificate().Raw})
	kc, err := clientcmd.Write(clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"": {Server: c.srv.URL, CertificateAuthorityData: c.caPEM}},
		Contexts:       map[string]*clientcmdapi.Context{},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{},
		CurrentContext: "",
	})
	if err != nil {
		t.Fatal(err)
	}
	c.kubeconfig = string(kc)
	c.sign(t, testTokenID, testSecret)
	return c
}

func (c *fakeCluster) sign(t *testing.T, id, secret string) {
	sig, err := tokenjws.ComputeDetachedSignature(c.kubeconfig, id, secret)
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	c.jws[id] = sig
	c.mu.Unlock()
}

func (c *fakeCluster) serve(w http.ResponseWriter, r *http.Request) {
	n := c.requests.Add(1)
	if r.URL.Path != clusterInfoAt || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	if r.Header.Get("Authorization") != "" {
		http.Error(w, "discovery must be anonymous", http.StatusBadRequest)
		return
	}
	kc := c.kubeconfig
	if n > 1 && c.second != "" {
		kc = c.second
	}
	cm := corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "cluster-info", Namespace: "kube-public"},
		Data:       map[string]string{"kubeconfig": kc},
	}
	c.mu.Lock()
	for id, sig := range c.jws {
		cm.Data["jws-kubeconfig-"+id] = sig
	}
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&cm)
}

// hash is the server CA's pin, as hack/join-command.sh prints it.
func (c *fakeCluster) hash() string { return CAHash(c.srv.Certificate()) }

func (c *fakeCluster) discovery() Discovery {
	return Discovery{Endpoint: c.srv.Listener.Addr().String(), Token: testToken, CACertHashes: []string{c.hash()}}
}

func TestDiscoverGood(t *testing.T) {
	c := newFakeCluster(t)
	d := c.discovery()
	info, err := d.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.Server != c.srv.URL || string(info.CAData) != string(c.caPEM) {
		t.Errorf("got server %q and CA %q, want %q and the server's CA", info.Server, info.CAData, c.srv.URL)
	}
	if n := c.requests.Load(); n != 2 {
		t.Errorf("%d requests, want 2: one unverified, one over the pinned CA", n)
	}
	// an https URL and an upper-case hash are the same endpoint and pin
	d.Endpoint, d.CACertHashes = c.srv.URL+"/", []string{strings.ToUpper(c.hash())}
	if _, err := d.Discover(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestDiscoverUnsafeSkipCAVerification(t *testing.T) {
	c := newFakeCluster(t)
	d := c.discovery()
	d.CACertHashes = nil
	if _, err := d.Discover(context.Background()); err == nil || !strings.Contains(err.Error(), "--discovery-token-ca-cert-hash is required") {
		t.Fatalf("no hash, no skip: got %v", err)
	}
	if n := c.requests.Load(); n != 0 {
		t.Fatalf("%d requests before the flags were checked", n)
	}
	d.UnsafeSkipCAVerification = true
	if _, err := d.Discover(context.Background()); err != nil {
		t.Fatal(err)
	}
	// the token is still checked
	d.Token = "abcdef.ffffffffffffffff"
	if _, err := d.Discover(context.Background()); err == nil || !strings.Contains(err.Error(), "does not match the token's secret") {
		t.Fatalf("bad secret with the CA check skipped: got %v", err)
	}
}

func TestDiscoverFailures(t *testing.T) {
	c := newFakeCluster(t)
	refused := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		return addr
	}()
	wrongHash := "sha256:" + strings.Repeat("ab", 32)
	for _, tc := range []struct {
		name string
		edit func(*Discovery)
		want []string
		// offline: the error comes before any request
		offline bool
	}{
		{"wrong CA hash", func(d *Discovery) { d.CACertHashes = []string{wrongHash} },
			[]string{"no --discovery-token-ca-cert-hash pins", c.hash()}, false},
		{"bad token secret", func(d *Discovery) { d.Token = "abcdef.ffffffffffffffff" },
			[]string{"does not match the token's secret"}, false},
		{"unknown token id", func(d *Discovery) { d.Token = "zzzzzz.0123456789abcdef" },
			[]string{`token id "zzzzzz" is unknown`, "jws-kubeconfig-zzzzzz"}, false},
		{"malformed token", func(d *Discovery) { d.Token = "abcdef0123456789abcdef" },
			[]string{"--token", "not a bootstrap token"}, true},
		{"malformed hash", func(d *Discovery) { d.CACertHashes = []string{"sha256:abc"} },
			[]string{"--discovery-token-ca-cert-hash", "32 byte"}, true},
		{"unreachable server", func(d *Discovery) { d.Endpoint = refused },
			[]string{"cluster-info from https://" + refused, "connection refused"}, false},
		{"http endpoint", func(d *Discovery) { d.Endpoint = "http://" + refused },
			[]string{"only https"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := c.requests.Load()
			d := c.discovery()
			tc.edit(&d)
			_, err := d.Discover(context.Background())
			if err == nil {
				t.Fatal("discovery succeeded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), testSecret) || strings.Contains(err.Error(), "ffffffffffffffff") {
				t.Errorf("error %q shows the token's secret", err)
			}
			if n := c.requests.Load() - before; tc.offline && n != 0 {
				t.Errorf("%d requests for a mistake in the flags", n)
			}
		})
	}
}

func TestDiscoverSecondCopyDiffers(t *testing.T) {
	c := newFakeCluster(t)
	c.second = c.kubeconfig + "# changed\n"
	d := c.discovery()
	if _, err := d.Discover(context.Background()); err == nil || !strings.Contains(err.Error(), "differs") {
		t.Fatalf("got %v", err)
	}
}

// The bootstrapsigner signs cluster-info for a new token a moment after the
// token is made: discovery waits for it, as kubeadm's.
func TestDiscoverWaitsForSignature(t *testing.T) {
	c := newFakeCluster(t)
	c.mu.Lock()
	sig := c.jws[testTokenID]
	delete(c.jws, testTokenID)
	c.mu.Unlock()
	d := c.discovery()
	d.Timeout, d.Interval = 5*time.Second, 20*time.Millisecond
	go func() {
		for c.requests.Load() < 2 {
			time.Sleep(5 * time.Millisecond)
		}
		c.mu.Lock()
		c.jws[testTokenID] = sig
		c.mu.Unlock()
	}()
	if _, err := d.Discover(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestParseEndpoint(t *testing.T) {
	for in, want := range map[string]string{
		"10.0.0.1:6443":             "https://10.0.0.1:6443",
		"https://cp.example:6443/":  "https://cp.example:6443",
		"[fd00::1]:6443":            "https://[fd00::1]:6443",
		"https://cp.example/prefix": "https://cp.example/prefix",
	} {
		if got, err := ParseEndpoint(in); err != nil || got != want {
			t.Errorf("ParseEndpoint(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "http://cp:6443", "https://", "https://cp:6443?x=1"} {
		if _, err := ParseEndpoint(bad); err == nil {
			t.Errorf("ParseEndpoint(%q) accepted", bad)
		}
	}
}
