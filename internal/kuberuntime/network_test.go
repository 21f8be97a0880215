package kuberuntime

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/runlet/runlet/internal/logtest"
	"github.com/runlet/runlet/internal/network/dns"
	"github.com/runlet/runlet/internal/poddir"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runtimefake"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
)

// sandboxRecorder keeps the configs sandboxes were created with.
type sandboxRecorder struct {
	*runtimefake.Fake
	mu   sync.Mutex
	cfgs []runtime.SandboxConfig
}

func (s *sandboxRecorder) CreateSandbox(ctx context.Context, cfg runtime.SandboxConfig) (runtime.Sandbox, error) {
	s.mu.Lock()
	s.cfgs = append(s.cfgs, cfg)
	s.mu.Unlock()
	return s.Fake.CreateSandbox(ctx, cfg)
}

type netEnv struct {
	*env
	rec   *sandboxRecorder
	dirs  poddir.Dirs
	hosts string
}

// newNetEnv is a manager with --cluster-dns 10.96.0.10, --cluster-domain
// cluster.local, a host resolv.conf with one search domain and a node
// hosts file of its own.
func newNetEnv(t *testing.T) *netEnv {
	e := newEnv(t)
	dir := t.TempDir()
	resolv := filepath.Join(dir, "resolv.conf")
	hosts := filepath.Join(dir, "hosts")
	if err := os.WriteFile(resolv, []byte("nameserver 192.0.2.53\nsearch corp.example\noptions timeout:2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hosts, []byte("127.0.0.1\tlocalhost\n192.0.2.1\tnode-1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	log := logtest.Discard()
	rec := &sandboxRecorder{Fake: e.f}
	dirs := poddir.New(filepath.Join(dir, "root"))
	e.m = NewManager(Config{Runtime: rec, Recorder: record.NewFakeRecorder(1000), RuntimeName: "podman", Owner: "node-1", Log: log,
		Dirs: dirs, HostsFile: hosts,
		DNS: dns.NewConfigurer(nil, log, nil, nil, []net.IP{net.ParseIP("10.96.0.10")}, "cluster.local", resolv)})
	return &netEnv{env: e, rec: rec, dirs: dirs, hosts: hosts}
}

func (e *netEnv) mounts(pod *v1.Pod, name string) map[string]string {
	e.t.Helper()
	cfg, ok := e.f.Config(e.latest(pod, name).ID)
	if !ok {
		e.t.Fatal("no config")
	}
	out := map[string]string{}
	for _, m := range cfg.Mounts {
		out[m.ContainerPath] = m.HostPath
	}
	return out
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A pod gets the kubelet's resolv.conf and /etc/hosts as mounts, and its
// sandbox the pod's host name; the files go with the pod.
func TestPodNetworkFiles(t *testing.T) {
	e := newNetEnv(t)
	pod := newPod(v1.RestartPolicyAlways, "a", "b")
	pod.Spec.DNSPolicy = v1.DNSClusterFirst
	pod.Spec.Hostname, pod.Spec.Subdomain = "web-0", "web"
	pod.Spec.HostAliases = []v1.HostAlias{{IP: "123.45.67.89", Hostnames: []string{"foo", "bar"}}}
	pod.Spec.Containers[1].VolumeMounts = []v1.VolumeMount{{Name: "h", MountPath: "/etc/hosts"}}
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	if h := e.rec.cfgs[0].Hostname; h != "web-0" {
		t.Errorf("sandbox host name %q; want web-0", h)
	}
	resolv := e.dirs.ResolvConf("uid-1")
	if got, want := readFile(t, resolv), "search ns.svc.cluster.local svc.cluster.local cluster.local corp.example\nnameserver 10.96.0.10\noptions ndots:5\n"; got != want {
		t.Errorf("resolv.conf:\n%s\nwant\n%s", got, want)
	}
	ip := e.f.Sandboxes()[0].IPs[0]
	a := e.mounts(pod, "a")
	if a["/etc/resolv.conf"] != resolv || a["/etc/hosts"] != e.dirs.EtcHosts("uid-1") {
		t.Errorf("container a mounts %v", a)
	}
	wantHosts := "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" +
		"fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n" +
		ip + "\tweb-0.web.ns.svc.cluster.local\tweb-0\n\n# Entries added by HostAliases.\n123.45.67.89\tfoo\tbar\n"
	if got := readFile(t, e.dirs.EtcHosts("uid-1")); got != wantHosts {
		t.Errorf("hosts:\n%s\nwant\n%s", got, wantHosts)
	}
	// b mounts something of its own at /etc/hosts: it keeps it.
	if b := e.mounts(pod, "b"); b["/etc/hosts"] != "" || b["/etc/resolv.conf"] != resolv {
		t.Errorf("container b mounts %v; want resolv.conf only", b)
	}
	if err := e.m.RemovePod(e.ctx, e.status(pod)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e.dirs.Pod("uid-1")); !os.IsNotExist(err) {
		t.Errorf("pod directory left after removal: %v", err)
	}
}

// setHostnameAsFQDN names the UTS namespace with the FQDN; hostnameOverride
// replaces the name and drops the domain.
func TestPodHostNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*v1.Pod)
		want string
	}{
		{"pod name", func(*v1.Pod) {}, "p"},
		{"FQDN", func(p *v1.Pod) { p.Spec.Subdomain, p.Spec.SetHostnameAsFQDN = "sub", ptr.To(true) }, "p.sub.ns.svc.cluster.local"},
		{"no FQDN without a subdomain", func(p *v1.Pod) { p.Spec.SetHostnameAsFQDN = ptr.To(true) }, "p"},
		{"override", func(p *v1.Pod) { p.Spec.Subdomain, p.Spec.HostnameOverride = "sub", ptr.To("over.example") }, "over.example"},
		{"host network keeps the host's name", func(p *v1.Pod) { p.Spec.HostNetwork = true }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newNetEnv(t)
			pod := newPod(v1.RestartPolicyAlways, "a")
			tc.mod(pod)
			if _, err := e.sync(pod); err != nil {
				t.Fatal(err)
			}
			if h := e.rec.cfgs[0].Hostname; h != tc.want {
				t.Errorf("sandbox host name %q; want %q", h, tc.want)
			}
		})
	}
}

// A host-network pod gets the node's hosts file with its aliases, and the
// host's resolver (ClusterFirst falls back to Default on the host network).
func TestHostNetworkPodFiles(t *testing.T) {
	e := newNetEnv(t)
	pod := newPod(v1.RestartPolicyAlways, "a")
	pod.Spec.HostNetwork, pod.Spec.DNSPolicy = true, v1.DNSClusterFirst
	pod.Spec.HostAliases = []v1.HostAlias{{IP: "123.45.67.89", Hostnames: []string{"foo"}}}
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	want := "# Kubernetes-managed hosts file (host network).\n127.0.0.1\tlocalhost\n192.0.2.1\tnode-1\n\n# Entries added by HostAliases.\n123.45.67.89\tfoo\n"
	if got := readFile(t, e.mounts(pod, "a")["/etc/hosts"]); got != want {
		t.Errorf("hosts:\n%q\nwant\n%q", got, want)
	}
	if got := readFile(t, e.dirs.ResolvConf("uid-1")); got != "search corp.example\nnameserver 192.0.2.53\noptions timeout:2\n" {
		t.Errorf("resolv.conf %q; want the host's", got)
	}
}

// A host name the kubelet refuses fails the sandbox with its event.
func TestInvalidHostnameFailsSandbox(t *testing.T) {
	e := newNetEnv(t)
	pod := newPod(v1.RestartPolicyAlways, "a")
	pod.Spec.Hostname = "Not_A_Label"
	_, err := e.sync(pod)
	if err == nil || !strings.Contains(err.Error(), `pod Hostname "Not_A_Label" is not a valid DNS label`) || len(e.f.Sandboxes()) != 0 {
		t.Fatalf("SyncPod = %v, sandboxes %v", err, e.f.Sandboxes())
	}
}

// TestSELinuxRelabelledFiles: where the host enforces SELinux, the files
// the core writes for a container (its /etc/hosts, resolv.conf and
// termination log) are to be relabelled, as the kubelet asks of its
// runtime; elsewhere nothing is.
func TestSELinuxRelabelledFiles(t *testing.T) {
	for _, enforced := range []bool{true, false} {
		e := newNetEnv(t)
		e.m.node.SELinux = enforced
		pod := newPod(v1.RestartPolicyAlways, "a")
		pod.Spec.Containers[0].TerminationMessagePath = v1.TerminationMessagePathDefault
		if _, err := e.sync(pod); err != nil {
			t.Fatal(err)
		}
		cfg, ok := e.f.Config(e.latest(pod, "a").ID)
		if !ok {
			t.Fatal("no config")
		}
		relabelled := map[string]bool{}
		for _, m := range cfg.Mounts {
			relabelled[m.ContainerPath] = m.Relabel
		}
		want := map[string]bool{"/etc/hosts": enforced, "/etc/resolv.conf": enforced, v1.TerminationMessagePathDefault: enforced}
		if !reflect.DeepEqual(relabelled, want) {
			t.Errorf("SELinux enforced %v: relabelled %v; want %v", enforced, relabelled, want)
		}
	}
}
