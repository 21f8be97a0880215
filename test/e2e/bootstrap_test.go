package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	certificatesv1 "k8s.io/api/certificates/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestBootstrapFaults: what can go wrong on the way to the node's identity gets a message that
// names it, and a node that waits keeps trying rather than crash-looping.
//   - a missing bootstrap kubeconfig stops runlet before it starts, naming the flag and the file;
//   - a token the apiserver does not know (401) is reported, and runlet waits;
//   - a CSR nobody approves is waited for, saying so; a denied one is asked for again, and once an
//     operator approves the new one, the node registers as system:node:<name>.
func TestBootstrapFaults(t *testing.T) {
	t.Parallel()
	c := framework.Get(t)
	dir := t.TempDir()

	missing := filepath.Join(dir, "no-such-kubeconfig")
	r := framework.StartRunlet(t, framework.RunletOptions{BootstrapKubeconfig: missing, NoWaitReady: true, AllowUncleanExit: true})
	waitExit(t, r, 30*time.Second)
	if code := r.ExitCode(); code == 0 || !strings.Contains(r.Log(), "--bootstrap-kubeconfig "+missing) {
		t.Errorf("missing bootstrap kubeconfig: exit %d, log:\n%s", code, r.LogTail(10))
	}

	unknown := bootstrapKubeconfig(t, c, dir, "unknown", "abcdef.0123456789abcdef")
	r = framework.StartRunlet(t, framework.RunletOptions{BootstrapKubeconfig: unknown, NoWaitReady: true, AllowUncleanExit: true})
	logSays(t, r, 60*time.Second, "the refused token reported", "Unauthorized")
	logSays(t, r, 60*time.Second, "the wait reported", "waiting for the node's client certificate")
	if !r.Running() {
		t.Fatalf("runlet exited on a refused token:\n%s", r.LogTail(20))
	}
	_, _ = r.Stop()

	// A token of a group that may create CSRs but whose node-client CSRs nothing approves.
	token := manualToken(t, c)
	r = framework.StartRunlet(t, framework.RunletOptions{BootstrapKubeconfig: bootstrapKubeconfig(t, c, dir, "manual", token), NoWaitReady: true})
	csrs := c.Client.CertificatesV1().CertificateSigningRequests()
	first := waitCSR(t, c, r.NodeName, "")
	logSays(t, r, 60*time.Second, "the wait for approval reported", "awaits approval")
	first.Status.Conditions = append(first.Status.Conditions, certificatesv1.CertificateSigningRequestCondition{
		Type: certificatesv1.CertificateDenied, Status: v1.ConditionTrue, Reason: "E2EDenied", Message: "denied by the test"})
	if _, err := csrs.UpdateApproval(context.Background(), first.Name, first, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	logSays(t, r, 60*time.Second, "the denial reported", "E2EDenied")
	second := waitCSR(t, c, r.NodeName, first.Name)
	mustKubectl(t, "certificate", "approve", second.Name)
	r.WaitReady(90 * time.Second)
	if !r.Running() {
		t.Fatalf("runlet exited:\n%s", r.LogTail(20))
	}
	pem, err := os.ReadFile(filepath.Join(r.RootDir, "pki", "kubelet-client-current.pem"))
	if err != nil || !strings.Contains(string(pem), "BEGIN CERTIFICATE") {
		t.Errorf("no client certificate in the cert dir: %v", err)
	}
}

// waitExit waits for runlet to exit on its own.
func waitExit(t *testing.T, r *framework.Runlet, timeout time.Duration) {
	t.Helper()
	select {
	case <-r.Exited():
	case <-time.After(timeout):
		t.Fatalf("runlet still runs after %s:\n%s", timeout, r.LogTail(20))
	}
}

// bootstrapKubeconfig writes a bootstrap kubeconfig with token for the test's cluster.
func bootstrapKubeconfig(t *testing.T, c *framework.Cluster, dir, name, token string) string {
	t.Helper()
	ca, err := os.ReadFile(c.CACert)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".kubeconfig")
	kc := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"" + c.Server + "\", certificate-authority-data: " +
		base64.StdEncoding.EncodeToString(ca) + "}}]\nusers: [{name: u, user: {token: " + token + "}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"
	if err := os.WriteFile(path, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// manualToken makes a bootstrap token in a group that may create CSRs (system:node-bootstrapper)
// but not have node-client CSRs approved by the controller-manager.
func manualToken(t *testing.T, c *framework.Cluster) string {
	t.Helper()
	ctx := context.Background()
	b := make([]byte, 3)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	id, secret := hex.EncodeToString(b), "0123456789abcdef"
	group := "system:bootstrappers:runlet-e2e-manual"
	_, err := c.Client.CoreV1().Secrets("kube-system").Create(ctx, &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "bootstrap-token-" + id},
		Type:       v1.SecretTypeBootstrapToken,
		StringData: map[string]string{"token-id": id, "token-secret": secret, "usage-bootstrap-authentication": "true",
			"auth-extra-groups": group, "expiration": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "runlet-e2e-manual-" + id},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:node-bootstrapper"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: group}}}
	if _, err := c.Client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Client.CoreV1().Secrets("kube-system").Delete(context.Background(), "bootstrap-token-"+id, metav1.DeleteOptions{})
		_ = c.Client.RbacV1().ClusterRoleBindings().Delete(context.Background(), binding.Name, metav1.DeleteOptions{})
	})
	return id + "." + secret
}

// waitCSR waits for a pending node-client CSR of node other than skip.
func waitCSR(t *testing.T, c *framework.Cluster, node, skip string) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	var found *certificatesv1.CertificateSigningRequest
	framework.Eventually(t, 60*time.Second, "runlet's node-client CSR", func() (bool, error) {
		var err error
		found, err = pendingCSR(c, certificatesv1.KubeAPIServerClientKubeletSignerName, "system:node:"+node, skip)
		return found != nil, err
	})
	t.Cleanup(func() {
		_ = c.Client.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), found.Name, metav1.DeleteOptions{})
	})
	return found
}

// logSays waits until runlet's log holds text.
func logSays(t *testing.T, r *framework.Runlet, timeout time.Duration, what, text string) {
	t.Helper()
	framework.Eventually(t, timeout, what, func() (bool, error) { return strings.Contains(r.Log(), text), nil })
}

// TestBootstrapReuseAndExpiry: a restart reuses the node's certificate while it is valid, asking for
// none; an expired one falls back to the bootstrap credential, which asks for a new one, and the
// node comes back with its pod still running.
func TestBootstrapReuseAndExpiry(t *testing.T) {
	t.Parallel()
	c := framework.Get(t)
	r := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	framework.CreatePod(t, framework.PodFor(r.NodeName, ns, "p", framework.Sleeper("c")))
	framework.WaitForPodPhase(t, ns, "p", v1.PodRunning, time.Minute)
	pemPath := filepath.Join(r.RootDir, "pki", "kubelet-client-current.pem")
	first := clientCert(t, pemPath)
	if first.Subject.CommonName != "system:node:"+r.NodeName || len(first.Subject.Organization) != 1 || first.Subject.Organization[0] != "system:nodes" {
		t.Fatalf("client certificate subject %v, want CN system:node:%s O system:nodes", first.Subject, r.NodeName)
	}
	r.Restart()
	if again := clientCert(t, pemPath); !again.Equal(first) {
		t.Errorf("a restart replaced a valid certificate (serial %v → %v)", first.SerialNumber, again.SerialNumber)
	}
	if n := nodeCSRs(t, c, r.NodeName); n != 1 {
		t.Errorf("%d node-client CSRs for the node after a restart, want the first one alone", n)
	}

	// What a long outage leaves: the certificate on disk has expired.
	if _, err := r.Stop(); err != nil {
		t.Fatal(err)
	}
	cert, key := expiredNodeCert(t, r.NodeName)
	if err := os.WriteFile(pemPath, append(cert, key...), 0o600); err != nil {
		t.Fatal(err)
	}
	r.Start()
	renewed := clientCert(t, pemPath)
	if !time.Now().Before(renewed.NotAfter) || renewed.Subject.CommonName != "system:node:"+r.NodeName {
		t.Errorf("after an expired certificate: %v until %v, want a valid one for the node", renewed.Subject, renewed.NotAfter)
	}
	if p := framework.WaitForPodPhase(t, ns, "p", v1.PodRunning, time.Minute); p.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("the pod's container restarted %d times", p.Status.ContainerStatuses[0].RestartCount)
	}
}

// clientCert parses the first certificate of a PEM file.
func clientCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for block, rest := pem.Decode(b); block != nil; block, rest = pem.Decode(rest) {
		if block.Type == "CERTIFICATE" {
			cert, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				t.Fatal(err)
			}
			return cert
		}
	}
	t.Fatalf("no certificate in %s", path)
	return nil
}

// nodeCSRs counts the node-client CSRs for node.
func nodeCSRs(t *testing.T, c *framework.Cluster, node string) int {
	t.Helper()
	list, err := c.Client.CertificatesV1().CertificateSigningRequests().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, csr := range list.Items {
		block, _ := pem.Decode(csr.Spec.Request)
		if csr.Spec.SignerName != certificatesv1.KubeAPIServerClientKubeletSignerName || block == nil {
			continue
		}
		if req, err := x509.ParseCertificateRequest(block.Bytes); err == nil && req.Subject.CommonName == "system:node:"+node {
			n++
		}
	}
	return n
}

// expiredNodeCert is a self-signed certificate for the node that expired an hour ago, and its key.
func expiredNodeCert(t *testing.T, node string) (cert, key []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "system:node:" + node, Organization: []string{"system:nodes"}},
		NotBefore: time.Now().Add(-2 * time.Hour), NotAfter: time.Now().Add(-time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
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
