package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSecurity calls runlet's kubelet port directly, without the apiserver,
// with every kind of credential the kubelet meets.
func TestSecurity(t *testing.T) {
	t.Parallel()
	c := framework.Get(t)
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	// RBAC first: runlet caches a denial for 30 s, as the kubelet does.
	none := saToken(t, ns, "no-rights")
	proxy := saToken(t, ns, "proxy-reader")
	grantNodes(t, ns, "proxy-reader", "proxy")
	statsTok := saToken(t, ns, "stats-reader")
	grantNodes(t, ns, "stats-reader", "stats")
	metricsTok := saToken(t, ns, "metrics-reader")
	grantNodes(t, ns, "metrics-reader", "metrics")
	apiserverCert := loadPair(t, filepath.Join(c.PKIDir, "apiserver-kubelet-client.crt"), filepath.Join(c.PKIDir, "apiserver-kubelet-client.key"))
	otherCA := foreignClientCert(t)

	for _, tc := range []struct {
		name, token, path string
		cert              *tls.Certificate
		want              int
	}{
		{"no credentials", "", "/pods", nil, 401},
		{"invalid token", "not-a-token", "/pods", nil, 401},
		{"ServiceAccount without rights", none, "/pods", nil, 403},
		{"ServiceAccount with nodes/proxy", proxy, "/pods", nil, 200},
		{"nodes/proxy does not grant nodes/stats", proxy, "/stats/summary", nil, 403},
		{"ServiceAccount with nodes/stats", statsTok, "/stats/summary", nil, 200},
		{"apiserver's kubelet-client certificate", "", "/pods", &apiserverCert, 200},
		{"apiserver's certificate on stats", "", "/stats/summary", &apiserverCert, 200},
		{"runlet's own metrics without credentials", "", "/metrics", nil, 401},
		{"nodes/stats does not grant nodes/metrics", statsTok, "/metrics", nil, 403},
		{"runlet's own metrics with nodes/metrics", metricsTok, "/metrics", nil, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body, err := kubeletGet(t, rl, tc.path, tc.token, tc.cert)
			if err != nil || code != tc.want {
				t.Errorf("GET %s: %d %.300q, %v; want %d", tc.path, code, body, err, tc.want)
			}
			if tc.path == "/metrics" && code == 200 && !strings.Contains(body, "\nrunlet_pleg_relist_duration_seconds_bucket{") {
				t.Errorf("GET /metrics on the kubelet port lacks runlet's metrics:\n%.2000s", body)
			}
		})
	}
	t.Run("certificate from another CA", func(t *testing.T) {
		code, body, err := kubeletGet(t, rl, "/pods", "", &otherCA)
		if err == nil && code != 401 {
			t.Errorf("GET /pods: %d %q; want a TLS error or 401", code, body)
		}
	})
}

// TestSecurityAlwaysAllow: turning authorization off is explicit and logged.
func TestSecurityAlwaysAllow(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{ExtraArgs: []string{"--authorization-mode=AlwaysAllow"}})
	if code, body, err := kubeletGet(t, rl, "/pods", "", nil); err != nil || code != 200 {
		t.Errorf("GET /pods without credentials: %d %q, %v; want 200 with AlwaysAllow", code, body, err)
	}
	if !strings.Contains(rl.Log(), "--authorization-mode=AlwaysAllow") {
		t.Error("runlet did not warn that its kubelet API accepts every request")
	}
}

// kubeletGet calls the kubelet port, verifying its serving certificate
// against the cluster CA (the framework's runlet-serving cert is for 127.0.0.1).
func kubeletGet(t *testing.T, rl *framework.Runlet, path, token string, cert *tls.Certificate) (int, string, error) {
	t.Helper()
	cfg := &tls.Config{RootCAs: caPool(t), MinVersion: tls.VersionTLS12}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	cl := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
	req, _ := http.NewRequest(http.MethodGet, rl.KubeletURL()+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := cl.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func caPool(t *testing.T) *x509.CertPool {
	t.Helper()
	pem, err := os.ReadFile(framework.Get(t).CACert)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	return pool
}

func loadPair(t *testing.T, cert, key string) tls.Certificate {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	return pair
}

// saToken creates a ServiceAccount and returns a token for it (TokenRequest).
func saToken(t *testing.T, ns, name string) string {
	t.Helper()
	cl := framework.Get(t).Client.CoreV1().ServiceAccounts(ns)
	ctx := context.Background()
	if _, err := cl.Create(ctx, &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ServiceAccount %s: %v", name, err)
	}
	tr, err := cl.CreateToken(ctx, name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s: %v", name, err)
	}
	return tr.Status.Token
}

// grantNodes binds the ServiceAccount to a ClusterRole allowing get and
// create on nodes/<subresource>; both are removed at cleanup.
func grantNodes(t *testing.T, ns, sa, subresource string) {
	t.Helper()
	rbac := framework.Get(t).Client.RbacV1()
	ctx := context.Background()
	name := framework.UniqueName(t, "nodes-"+subresource)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{{
		APIGroups: []string{""}, Resources: []string{"nodes/" + subresource}, Verbs: []string{"get", "create"},
	}}}
	if _, err := rbac.ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: sa}},
	}
	if _, err := rbac.ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = rbac.ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = rbac.ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
}

// foreignClientCert is a system:masters client certificate from a CA the
// cluster has never seen.
func foreignClientCert(t *testing.T) tls.Certificate {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "impostor-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der, caDER}, PrivateKey: key}
}
