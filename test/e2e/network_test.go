package e2e

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// hostResolvConf is the node's resolver file the tests hand runlet (--resolv-conf), so that what
// pods get does not depend on the machine.
const hostResolvConf = "# the node's\nnameserver 192.0.2.53\nsearch corp.example\noptions timeout:2 attempts:3\n"

// hostDNS is what a Default pod gets from it: the same resolver, written as containerd writes it.
const hostDNS = "search corp.example\nnameserver 192.0.2.53\noptions timeout:2 attempts:3\n"

// TestPodNetwork checks what containers see of their network identity on a node with
// --cluster-dns and --cluster-domain: resolv.conf per dnsPolicy, the kubelet-managed /etc/hosts
// (with hostAliases, on the pod network and the host's), host names, and their environment.
func TestPodNetwork(t *testing.T) {
	t.Parallel()
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(resolv, []byte(hostResolvConf), 0o644); err != nil {
		t.Fatal(err)
	}
	rl := framework.StartRunlet(t, framework.RunletOptions{ExtraArgs: []string{
		"--cluster-dns", "10.96.0.10", "--cluster-domain", "cluster.local", "--resolv-conf", resolv}})
	ns := framework.Namespace(t)
	node := rl.NodeName
	t.Run("ResolvConfPerDNSPolicy", func(t *testing.T) { t.Parallel(); testResolvConf(t, node, ns) })
	t.Run("EtcHosts", func(t *testing.T) { t.Parallel(); testEtcHosts(t, node, ns) })
	t.Run("EtcHostsHostNetwork", func(t *testing.T) { t.Parallel(); testEtcHostsHostNetwork(t, node, ns) })
	t.Run("HostNames", func(t *testing.T) { t.Parallel(); testHostNames(t, node, ns) })
	t.Run("Environment", func(t *testing.T) { t.Parallel(); testEnvironment(t, node, ns) })
}

// runToCompletion runs a one-container pod under restartPolicy Never and returns its log.
func runToCompletion(t *testing.T, pod *v1.Pod) string {
	t.Helper()
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	framework.CreatePod(t, pod)
	framework.WaitForPodPhase(t, pod.Namespace, pod.Name, v1.PodSucceeded, 90*time.Second)
	return framework.Kubectl(t, "logs", "-n", pod.Namespace, pod.Name)
}

func testResolvConf(t *testing.T, node, ns string) {
	cluster := fmt.Sprintf("search %s.svc.cluster.local svc.cluster.local cluster.local corp.example\nnameserver 10.96.0.10\noptions ndots:5\n", ns)
	two := "2"
	for _, tc := range []struct {
		name        string
		policy      v1.DNSPolicy
		hostNetwork bool
		config      *v1.PodDNSConfig
		want        string
	}{
		{"clusterfirst", v1.DNSClusterFirst, false, nil, cluster},
		{"default", v1.DNSDefault, false, nil, hostDNS},
		{"none", v1.DNSNone, false, &v1.PodDNSConfig{Nameservers: []string{"203.0.113.1"}, Searches: []string{"a.example"},
			Options: []v1.PodDNSConfigOption{{Name: "ndots", Value: &two}, {Name: "edns0"}}},
			"search a.example\nnameserver 203.0.113.1\noptions ndots:2 edns0\n"},
		{"clusterfirst-dnsconfig", v1.DNSClusterFirst, false, &v1.PodDNSConfig{Nameservers: []string{"10.96.0.11"}, Searches: []string{"my.example"},
			Options: []v1.PodDNSConfigOption{{Name: "ndots", Value: &two}, {Name: "edns0"}}},
			fmt.Sprintf("search %s.svc.cluster.local svc.cluster.local cluster.local corp.example my.example\nnameserver 10.96.0.10\nnameserver 10.96.0.11\noptions ndots:2 edns0\n", ns)},
		{"hostnet-clusterfirst", v1.DNSClusterFirst, true, nil, hostDNS},
		{"hostnet-clusterfirstwithhostnet", v1.DNSClusterFirstWithHostNet, true, nil, cluster},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod := framework.PodFor(node, ns, "dns-"+tc.name, framework.Busybox("main", "cat", "/etc/resolv.conf"))
			pod.Spec.DNSPolicy, pod.Spec.HostNetwork, pod.Spec.DNSConfig = tc.policy, tc.hostNetwork, tc.config
			if got := runToCompletion(t, pod); got != tc.want {
				t.Errorf("resolv.conf:\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

// managedHostsHead is the start of every kubelet-managed hosts file on the pod network.
const managedHostsHead = "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" +
	"fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n"

// testEtcHosts: the pod's own entry (with its FQDN under a subdomain), then the hostAliases, in
// the kubelet's format; a container that mounts its own /etc/hosts keeps it.
func testEtcHosts(t *testing.T, node, ns string) {
	pod := framework.PodFor(node, ns, "hosts", framework.Busybox("main", "sh", "-c", "cat /etc/hosts; exec sleep 3600"),
		framework.Busybox("own", "sh", "-c", "cat /etc/hosts; exec sleep 3600"))
	pod.Spec.Hostname, pod.Spec.Subdomain = "web-0", "web"
	pod.Spec.HostAliases = []v1.HostAlias{{IP: "123.45.67.89", Hostnames: []string{"foo", "bar"}}, {IP: "10.1.2.3", Hostnames: []string{"baz"}}}
	fileOrCreate := v1.HostPathFileOrCreate
	pod.Spec.Volumes = []v1.Volume{{Name: "own", VolumeSource: v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/etc/hosts", Type: &fileOrCreate}}}}
	pod.Spec.Containers[1].VolumeMounts = []v1.VolumeMount{{Name: "own", MountPath: "/etc/hosts"}}
	framework.CreatePod(t, pod)
	p := framework.WaitForPodPhase(t, ns, pod.Name, v1.PodRunning, 90*time.Second)
	want := managedHostsHead + p.Status.PodIP + "\tweb-0.web." + ns + ".svc.cluster.local\tweb-0\n" +
		"\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n10.1.2.3\tbaz\n"
	framework.Eventually(t, 30*time.Second, "the managed hosts file in the log", func() (bool, error) {
		out, err := framework.KubectlE("logs", "-n", ns, pod.Name, "-c", "main")
		return out == want, err
	})
	out := framework.Kubectl(t, "logs", "-n", ns, pod.Name, "-c", "own")
	if strings.Contains(out, "Kubernetes-managed") {
		t.Errorf("a container mounting its own /etc/hosts got the managed one:\n%s", out)
	}
}

// testEtcHostsHostNetwork: a host-network pod gets the node's hosts file under the kubelet's
// host-network header, then its aliases (the upstream hostAliases+hostNetwork spec checks the
// alias line).
func testEtcHostsHostNetwork(t *testing.T, node, ns string) {
	nodeHosts, err := os.ReadFile("/etc/hosts")
	if err != nil {
		t.Fatal(err)
	}
	pod := framework.PodFor(node, ns, "hosts-hostnet", framework.Busybox("main", "cat", "/etc/hosts"))
	pod.Spec.HostNetwork = true
	pod.Spec.HostAliases = []v1.HostAlias{{IP: "123.45.67.89", Hostnames: []string{"foo", "bar"}}}
	want := "# Kubernetes-managed hosts file (host network).\n" + string(nodeHosts) + "\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n"
	if got := runToCompletion(t, pod); got != want {
		t.Errorf("hosts:\n%s\nwant\n%s", got, want)
	}
}

func testHostNames(t *testing.T, node, ns string) {
	host, _ := os.Hostname()
	for _, tc := range []struct {
		name string
		mod  func(*v1.Pod)
		want string
	}{
		{"plain", func(*v1.Pod) {}, "hn-plain"},
		{"hostname", func(p *v1.Pod) { p.Spec.Hostname = "custom" }, "custom"},
		{"subdomain", func(p *v1.Pod) { p.Spec.Hostname, p.Spec.Subdomain = "custom", "sub" }, "custom"},
		{"fqdn", func(p *v1.Pod) {
			p.Spec.Hostname, p.Spec.Subdomain, p.Spec.SetHostnameAsFQDN = "custom", "sub", ptr.To(true)
		}, "custom.sub." + ns + ".svc.cluster.local"},
		{"override", func(p *v1.Pod) { p.Spec.Subdomain, p.Spec.HostnameOverride = "sub", ptr.To("override.example.host") }, "override.example.host"},
		{"hostnet", func(p *v1.Pod) { p.Spec.HostNetwork = true }, host},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod := framework.PodFor(node, ns, "hn-"+tc.name, framework.Busybox("main", "sh", "-c", `echo "$(hostname);$HOSTNAME"`))
			tc.mod(pod)
			if got, want := runToCompletion(t, pod), tc.want+";"+tc.want+"\n"; got != want {
				t.Errorf("hostname;$HOSTNAME = %q; want %q", got, want)
			}
		})
	}
}

// testEnvironment: the container's environment holds the image's and the pod's variables, the
// service links and HOSTNAME, and none of podman's own (container=podman, TERM without a TTY).
// Variable names that are not shell identifiers reach the container too.
func testEnvironment(t *testing.T, node, ns string) {
	c := framework.Busybox("main", "env")
	c.Env = []v1.EnvVar{{Name: "FOO", Value: "bar"}, {Name: "data-1", Value: "value-1"}}
	pod := framework.PodFor(node, ns, "env-plain", c)
	env := envSet(runToCompletion(t, pod))
	for _, kv := range []string{"FOO=bar", "data-1=value-1", "PATH=/bin", "HOSTNAME=env-plain"} {
		k, v, _ := strings.Cut(kv, "=")
		if got, ok := env[k]; !ok || got != v {
			t.Errorf("env lacks %s (has %q)", kv, got)
		}
	}
	if _, ok := env["KUBERNETES_SERVICE_HOST"]; !ok {
		t.Error("no service links (KUBERNETES_SERVICE_HOST)")
	}
	for _, k := range []string{"container", "TERM"} {
		if v, ok := env[k]; ok {
			t.Errorf("env has %s=%s", k, v)
		}
	}
	// With a TTY the runtime sets TERM=xterm, as containerd does.
	tty := framework.Busybox("main", "env")
	tty.TTY, tty.Stdin = true, true
	env = envSet(runToCompletion(t, framework.PodFor(node, ns, "env-tty", tty)))
	if env["TERM"] != "xterm" {
		t.Errorf("TERM with a TTY = %q; want xterm", env["TERM"])
	}
	if _, ok := env["container"]; ok {
		t.Error("env has container=podman")
	}
}

func envSet(out string) map[string]string {
	env := map[string]string{}
	for _, line := range strings.Split(strings.ReplaceAll(out, "\r\n", "\n"), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = v
		}
	}
	return env
}

// TestMissingClusterDNS: without --cluster-dns a ClusterFirst pod gets the node's resolver (here
// --resolv-conf's) and the kubelet's MissingClusterDNS warning.
func TestMissingClusterDNS(t *testing.T) {
	t.Parallel()
	resolv := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(resolv, []byte(hostResolvConf), 0o644); err != nil {
		t.Fatal(err)
	}
	rl := framework.StartRunlet(t, framework.RunletOptions{ExtraArgs: []string{"--resolv-conf", resolv}})
	ns := framework.Namespace(t)
	pod := framework.PodFor(rl.NodeName, ns, "nodns", framework.Busybox("main", "cat", "/etc/resolv.conf"))
	pod.Spec.DNSPolicy = v1.DNSClusterFirst
	if got := runToCompletion(t, pod); got != hostDNS {
		t.Errorf("resolv.conf:\n%s\nwant the node's:\n%s", got, hostDNS)
	}
	framework.Eventually(t, 30*time.Second, "a MissingClusterDNS event", func() (bool, error) {
		return hasEvent(t, ns, pod.Name, "MissingClusterDNS",
			`kubelet does not have ClusterDNS IP configured and cannot create Pod using "ClusterFirst" policy. Falling back to "Default" policy.`), nil
	})
}

// TestNodeNetworkRemovedAfterKill: runlet is killed while a pod maps a hostPort, and the node does not
// come back (make stop RM_PODS=1, a conformance or test node): what hack/lib.sh's remove_node_network
// takes away includes the pod's hostPort rules, so the port reaches the host's own listener again.
func TestNodeNetworkRemovedAfterKill(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	url := hostPortPod(t, rl.NodeName, ns)
	if t.Failed() {
		t.FailNow()
	}

	rl.Kill()
	out, err := framework.RemoveNodeNetwork(rl.RootDir, rl.NodeName)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "hostPort rules") {
		t.Errorf("remove_node_network said %q; want the pod's hostPort rules removed", out)
	}
	ln, err := net.Listen("tcp", strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "host") }), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	if got := hostGet(t, url, 30*time.Second); got != "host" {
		t.Errorf("%s answered %q; want the host's own listener", url, got)
	}
}
