package framework

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The local cluster's add-ons as hack/ runs them: kube-proxy on the host and CoreDNS behind the
// kube-dns Service.
const (
	// ClusterDNSIP is the kube-dns Service's fixed ClusterIP (hack/cluster-dns.sh), runlet's --cluster-dns.
	ClusterDNSIP = "10.0.0.10"
	// ClusterDomain is the cluster's DNS domain, runlet's --cluster-domain.
	ClusterDomain = "cluster.local"
)

// HostIP is the host address the control plane advertises (hack/cp-up.sh's HOST_IP): the
// kubernetes Service's endpoint, and an address kube-proxy serves NodePorts on (not 127.0.0.1: it
// leaves route_localnet alone).
func (c *Cluster) HostIP(t testing.TB) string { return c.env(t, "HOST_IP") }

// ClusterCIDR is the pod network the controller-manager splits into the nodes' podCIDRs: each local
// control plane has its own (hack/cp-up.sh), so that clusters on one host never share an address.
func (c *Cluster) ClusterCIDR(t testing.TB) string { return c.env(t, "CLUSTER_CIDR") }

// env reads one of the variables hack/cp-up.sh wrote to the control plane's env file.
func (c *Cluster) env(t testing.TB, key string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(c.CPDir, "env"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "export "+key+"="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	t.Fatalf("no %s in %s/env", key, c.CPDir)
	return ""
}

// ClusterDNSArgs are the runlet flags of a node whose pods use the cluster DNS.
func ClusterDNSArgs() []string {
	return []string{"--cluster-dns", ClusterDNSIP, "--cluster-domain", ClusterDomain}
}

func (c *Cluster) addonEnv(extra ...string) []string {
	return append([]string{"CP_DIR=" + c.CPDir, "PORT_BASE=" + strconv.Itoa(c.PortBase), "CP_BIN_DIR=" + c.BinDir}, extra...)
}

// kubeProxyWait is how long StartKubeProxy waits for another local cluster's kube-proxy to go (a
// conformance run's, say) before it gives up.
const kubeProxyWait = 15 * time.Minute

// StartKubeProxy runs kube-proxy on the host for the test's control plane, acting for node, until the
// end of the test (hack/kube-proxy.sh up/down, which also removes its rules). Only one kube-proxy can own
// a host's Service rules: while another local cluster runs one, the test waits for it to go, up to
// kubeProxyWait, and then fails naming it.
func StartKubeProxy(t testing.TB, node string) {
	t.Helper()
	c := Get(t)
	env := c.addonEnv("NODE_NAME=" + node)
	deadline := time.Now().Add(kubeProxyWait)
	for {
		var stderr strings.Builder
		_, err := runScript(c.RepoRoot, env, &stderr, "hack/kube-proxy.sh", "up")
		if err == nil {
			break
		}
		if !strings.Contains(stderr.String(), "another kube-proxy") || time.Now().After(deadline) {
			t.Fatalf("hack/kube-proxy.sh up: %v: %s (log: %s/logs/kube-proxy.log)", err, stderr.String(), c.CPDir)
		}
		logf("%s: waiting for it to go", strings.TrimSpace(stderr.String()))
		time.Sleep(10 * time.Second)
	}
	t.Cleanup(func() {
		if _, err := runScript(c.RepoRoot, env, os.Stderr, "hack/kube-proxy.sh", "down"); err != nil {
			t.Errorf("hack/kube-proxy.sh down: %v", err)
		}
	})
}

// DeployClusterDNS applies the CoreDNS add-on (hack/cluster-dns.sh), pins it to node, and waits until it
// serves; it is deleted at the end of the test. Its pod reaches the apiserver through the kubernetes
// Service, so kube-proxy must run.
func DeployClusterDNS(t testing.TB, node string) {
	t.Helper()
	c := Get(t)
	env := c.addonEnv()
	if _, err := runScript(c.RepoRoot, env, os.Stderr, "hack/cluster-dns.sh", "up"); err != nil {
		t.Fatalf("hack/cluster-dns.sh up: %v", err)
	}
	t.Cleanup(func() {
		if _, err := runScript(c.RepoRoot, env, os.Stderr, "hack/cluster-dns.sh", "down"); err != nil {
			t.Errorf("hack/cluster-dns.sh down: %v", err)
		}
	})
	Kubectl(t, "-n", "kube-system", "patch", "deployment", "coredns", "--type=merge", "-p",
		`{"spec":{"template":{"spec":{"nodeSelector":{"kubernetes.io/hostname":"`+node+`"}}}}}`)
	if _, err := runScript(c.RepoRoot, env, os.Stderr, "hack/cluster-dns.sh", "wait"); err != nil {
		t.Fatalf("hack/cluster-dns.sh wait: %v\n%s", err, KubectlOr("-n", "kube-system", "describe", "pods", "-l", "k8s-app=kube-dns"))
	}
}

// KubectlOr runs kubectl and returns its output, or the error's text.
func KubectlOr(args ...string) string {
	out, err := KubectlE(args...)
	if err != nil {
		return err.Error()
	}
	return out
}
