// Package chart tests charts/runlet as helm renders it: the defaults, every mode, the schema, the
// RBAC, and that deploy/runlet.yaml is the chart's rendering. It needs the helm binary that
// hack/cp-build.sh builds (or $HELM); without one the tests are skipped.
package chart

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/runlet/runlet/internal/kubeletconfig"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
)

const kubeVersion = "1.37.2"

func repoRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func helmBinary(t *testing.T) string {
	t.Helper()
	if h := os.Getenv("HELM"); h != "" {
		return h
	}
	cache := os.Getenv("RUNLET_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "runlet")
	}
	if h := filepath.Join(cache, "cp-v"+kubeVersion, "bin", "helm"); fileExists(h) {
		return h
	}
	if h, err := exec.LookPath("helm"); err == nil {
		return h
	}
	t.Skip("helm not found: hack/cp-build.sh builds it (or set HELM)")
	return ""
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// helm runs helm with args and returns stdout, or the error with stderr.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(helmBinary(t), args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), errors.New(err.Error() + ": " + errb.String())
	}
	return out.String(), nil
}

// rendered is one helm template run, decoded.
type rendered struct {
	objs []k8sruntime.Object
}

func render(t *testing.T, release string, set ...string) rendered {
	t.Helper()
	args := []string{"template", release, filepath.Join(repoRoot(t), "charts", "runlet"), "--namespace", "runlet-system", "--kube-version", kubeVersion}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	out, err := helm(t, args...)
	if err != nil {
		t.Fatalf("helm template %v: %v", set, err)
	}
	return rendered{objs: decode(t, out)}
}

func decode(t *testing.T, manifests string) []k8sruntime.Object {
	t.Helper()
	var objs []k8sruntime.Object
	d := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifests), 4096)
	for {
		var raw k8sruntime.RawExtension
		if err := d.Decode(&raw); errors.Is(err, io.EOF) {
			return objs
		} else if err != nil {
			t.Fatalf("decoding the rendered chart: %v", err)
		}
		if len(bytes.TrimSpace(raw.Raw)) == 0 || string(bytes.TrimSpace(raw.Raw)) == "null" {
			continue
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(raw.Raw, nil, nil)
		if err != nil {
			t.Fatalf("decoding %s: %v", raw.Raw, err)
		}
		objs = append(objs, obj)
	}
}

func (r rendered) deployment(t *testing.T) *appsv1.Deployment {
	t.Helper()
	for _, o := range r.objs {
		if d, ok := o.(*appsv1.Deployment); ok {
			return d
		}
	}
	t.Fatal("no Deployment rendered")
	return nil
}

func (r rendered) daemonSet(t *testing.T) *appsv1.DaemonSet {
	t.Helper()
	for _, o := range r.objs {
		if d, ok := o.(*appsv1.DaemonSet); ok {
			return d
		}
	}
	t.Fatal("no DaemonSet rendered")
	return nil
}

func (r rendered) job(t *testing.T) *batchv1.Job {
	t.Helper()
	for _, o := range r.objs {
		if j, ok := o.(*batchv1.Job); ok {
			return j
		}
	}
	t.Fatal("no Job rendered")
	return nil
}

// podSpec is the runlet pod's spec: the DaemonSet's in perHost mode, else the Deployment's.
func (r rendered) podSpec(t *testing.T, mode string) v1.PodSpec {
	if mode == "perHost" {
		return r.daemonSet(t).Spec.Template.Spec
	}
	return r.deployment(t).Spec.Template.Spec
}

// configMap is the chart's ConfigMap: runlet's config file and bootstrap kubeconfig.
func (r rendered) configMap(t *testing.T) *v1.ConfigMap {
	t.Helper()
	for _, o := range r.objs {
		if cm, ok := o.(*v1.ConfigMap); ok {
			return cm
		}
	}
	t.Fatal("no ConfigMap rendered")
	return nil
}

// kubeletConfig is the config file runlet's --config names, read by runlet's own loader, which must
// have no warning (an unknown or misspelt field) about it.
func (r rendered) kubeletConfig(t *testing.T) *kubeletconfig.Config {
	t.Helper()
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(r.configMap(t).Data["config.yaml"]), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := kubeletconfig.Load(file, "")
	if err != nil {
		t.Fatalf("runlet's config file: %v", err)
	}
	if len(cfg.Warnings) > 0 {
		t.Errorf("runlet's config file: %v", cfg.Warnings)
	}
	return cfg
}

// arg returns the value of --name=value in args.
func arg(args []string, name string) (string, bool) {

	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

func port(t *testing.T, c v1.Container, name string) v1.ContainerPort {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("container has no port %q", name)
	return v1.ContainerPort{}
}

func TestLintStrict(t *testing.T) {
	chart := filepath.Join(repoRoot(t), "charts", "runlet")
	for _, set := range [][]string{
		nil,
		{"mode=perHost"},
		{"mode=remote", "podman.url=tcp://podman-host:8888"},
		{"mode=remote", "podman.url=ssh://core@podman-host/run/podman/podman.sock", "podman.ssh.existingSecret=ssh"},
		{"network.plugin=kubenet", "network.podCIDR=10.244.0.0/24", "network.hostPaths={/run/flannel}"},
	} {
		args := []string{"lint", "--strict", chart}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		if out, err := helm(t, args...); err != nil {
			t.Errorf("helm lint --strict %v: %v\n%s", set, err, out)
		}
	}
}

func TestDefaultsAreHostModeOnTheHostsPodman(t *testing.T) {
	r := render(t, "edge")
	d := r.deployment(t)
	spec := d.Spec.Template.Spec
	c := spec.Containers[0]
	if *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType {
		t.Errorf("one runlet per node, never two at once: replicas %d, strategy %s", *d.Spec.Replicas, d.Spec.Strategy.Type)
	}
	if !spec.HostNetwork || !spec.HostPID {
		t.Errorf("host mode: hostNetwork %v hostPID %v; want both", spec.HostNetwork, spec.HostPID)
	}
	if c.Image != "localhost/runlet:v0.1.0" {
		t.Errorf("image %q; want what make image builds, tagged with the appVersion", c.Image)
	}
	want := map[string]string{
		"nodename": "edge", "podman-socket": "unix:///run/podman/podman.sock", "root-dir": "/var/lib/runlet/edge",
		"node-ip": "$(NODE_IP)", "node-labels": "runlet.dev/name=runlet,runlet.dev/instance=edge",
	}
	for name, v := range want {
		if got, _ := arg(c.Args, name); got != v {
			t.Errorf("--%s=%q; want %q", name, got, v)
		}
	}
	cfg := r.kubeletConfig(t)
	if cfg.Has("authentication.x509.clientCAFile") {
		t.Error("clientCAFile set by default: the kubelet API verifies clients against the cluster's CA")
	}
	kubelet, metrics := port(t, c, "kubelet"), port(t, c, "metrics")
	for _, p := range []v1.ContainerPort{kubelet, metrics} {
		if p.ContainerPort >= 10248 && p.ContainerPort <= 10259 {
			t.Errorf("port %s=%d is among the kubelet's and the control plane's", p.Name, p.ContainerPort)
		}
		if p.HostPort != p.ContainerPort {
			t.Errorf("port %s is not declared on the host (hostPort %d): the scheduler cannot keep two runlets apart", p.Name, p.HostPort)
		}
	}
	if cfg.Port != kubelet.ContainerPort {
		t.Errorf("config port %d, container port %d", cfg.Port, kubelet.ContainerPort)
	}
	// Plain HTTP without authentication: on the host's network, loopback only,
	// where the kubelet's probes reach it.
	checkMetricsEndpoint(t, c, "127.0.0.1", metrics.ContainerPort)
	if !onlyOffVirtualNodes(spec.Affinity) {
		t.Errorf("affinity %+v; want runlet kept off virtual nodes", spec.Affinity)
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
		if m.Name == "state" && (m.MountPropagation == nil || *m.MountPropagation != v1.MountPropagationBidirectional) {
			t.Error("the state dir is not mounted Bidirectional: tmpfs volumes runlet mounts there would not reach podman")
		}
	}
	for _, v := range spec.Volumes {
		if v.Name == "config" {
			continue // the ConfigMap: --config and --bootstrap-kubeconfig
		}
		if v.HostPath == nil || mounts[v.Name] != v.HostPath.Path {
			t.Errorf("volume %s: want a hostPath mounted at its own path, got %+v at %q", v.Name, v.VolumeSource, mounts[v.Name])
		}
	}
}

func onlyOffVirtualNodes(a *v1.Affinity) bool {
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return false
	}
	for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		found := false
		for _, e := range term.MatchExpressions {
			found = found || (e.Key == "type" && e.Operator == v1.NodeSelectorOpNotIn && len(e.Values) == 1 && e.Values[0] == "virtual-kubelet")
		}
		if !found {
			return false // a term without the rule lets virtual nodes in
		}
	}
	return true
}

// checkMetricsEndpoint: --metrics-addr listens on host (empty: every
// address) at the metrics port, and both probes ask /healthz there.
func checkMetricsEndpoint(t *testing.T, c v1.Container, host string, port int32) {
	t.Helper()
	if got, _ := arg(c.Args, "metrics-addr"); got != host+":"+strconv.Itoa(int(port)) {
		t.Errorf("--metrics-addr=%s; want %s:%d", got, host, port)
	}
	for _, p := range []*v1.Probe{c.ReadinessProbe, c.LivenessProbe} {
		if p == nil || p.HTTPGet == nil || !strings.HasPrefix(p.HTTPGet.Path, "/healthz") || p.HTTPGet.Port.StrVal != "metrics" || p.HTTPGet.Host != host {
			t.Errorf("probe %+v; want /healthz on the metrics port at host %q", p, host)
		}
	}
}

func TestTwoReleasesDoNotCollide(t *testing.T) {
	ra, rb := render(t, "edge-a"), render(t, "edge-b")
	a, b := ra.deployment(t), rb.deployment(t)
	ca, cb := a.Spec.Template.Spec.Containers[0], b.Spec.Template.Spec.Containers[0]
	if pa, pb := ra.kubeletConfig(t).Port, rb.kubeletConfig(t).Port; pa == pb {
		t.Errorf("the kubelet API's port is %d for both releases", pa)
	}
	for _, name := range []string{"nodename", "root-dir", "metrics-addr"} {
		va, _ := arg(ca.Args, name)
		vb, _ := arg(cb.Args, name)
		if va == vb {
			t.Errorf("--%s is %q for both releases", name, va)
		}
	}
	if a.Name == b.Name {
		t.Errorf("both releases' Deployments are named %s", a.Name)
	}
}

func TestPerHostModeIsADaemonSetWithANodePerHost(t *testing.T) {
	ds := render(t, "edge", "mode=perHost").daemonSet(t)
	c := ds.Spec.Template.Spec.Containers[0]
	if got, _ := arg(c.Args, "nodename"); got != "edge-$(HOST_NODE_NAME)" {
		t.Errorf("--nodename=%q; want <release>-<host node>", got)
	}
	if got, _ := arg(c.Args, "root-dir"); got != "/var/lib/runlet/edge-$(HOST_NODE_NAME)" {
		t.Errorf("--root-dir=%q", got)
	}
	var fromSpec bool
	for _, e := range c.Env {
		fromSpec = fromSpec || (e.Name == "HOST_NODE_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef.FieldPath == "spec.nodeName")
	}
	if !fromSpec {
		t.Errorf("HOST_NODE_NAME is not the pod's spec.nodeName: %+v", c.Env)
	}
	if !ds.Spec.Template.Spec.HostNetwork {
		t.Error("perHost mode without hostNetwork")
	}
}

func TestRemoteModeNeedsNoHost(t *testing.T) {
	r := render(t, "far", "mode=remote", "podman.url=ssh://core@podman-host/run/podman/podman.sock",
		"podman.ssh.identity=KEY", "podman.ssh.knownHosts=podman-host ssh-ed25519 AAAA")
	spec := r.deployment(t).Spec.Template.Spec
	c := spec.Containers[0]
	if spec.HostNetwork || spec.HostPID {
		t.Errorf("remote mode: hostNetwork %v hostPID %v; want neither", spec.HostNetwork, spec.HostPID)
	}
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			t.Errorf("remote mode mounts host path %s", v.HostPath.Path)
		}
	}
	if got, _ := arg(c.Args, "podman-socket"); got != "ssh://core@podman-host/run/podman/podman.sock" {
		t.Errorf("--podman-socket=%q", got)
	}
	if _, ok := arg(c.Args, "podman-identity"); !ok {
		t.Error("no --podman-identity for an ssh:// socket")
	}
	// In its own network namespace the pod's probes come to the pod IP.
	checkMetricsEndpoint(t, c, "", port(t, c, "metrics").ContainerPort)
	sc := c.SecurityContext
	if sc == nil || sc.Privileged != nil && *sc.Privileged || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("remote mode security context %+v; want nonroot, read-only, unprivileged", sc)
	}
	var secret bool
	for _, o := range r.objs {
		if s, ok := o.(*v1.Secret); ok && s.StringData["identity"] == "KEY" && s.StringData["known_hosts"] != "" {
			secret = true
		}
	}
	if !secret {
		t.Error("no Secret with the ssh identity and known_hosts")
	}
}

// runlet's ServiceAccount is a bootstrap credential and nothing more: bound to the two built-in roles
// that let it create node-client CSRs and have them approved, never to a role of the chart's. Everything
// else runlet does as system:node:<node>, under the Node authorizer and NodeRestriction.
func TestRBACIsOnlyTheBootstrap(t *testing.T) {
	want := map[string]bool{"system:node-bootstrapper": true, "system:certificates.k8s.io:certificatesigningrequests:nodeclient": true}
	for _, set := range [][]string{nil, {"tls.bootstrap=true"}, {"mode=perHost"}, {"mode=remote", "podman.url=tcp://podman-host:8888"}} {
		r := render(t, "edge", set...)
		sa := r.podSpec(t, modeOf(set)).ServiceAccountName
		got := map[string]bool{}
		for _, o := range r.objs {
			var ref rbacv1.RoleRef
			var subjects []rbacv1.Subject
			switch o := o.(type) {
			case *rbacv1.ClusterRoleBinding:
				ref, subjects = o.RoleRef, o.Subjects
			case *rbacv1.RoleBinding:
				ref, subjects = o.RoleRef, o.Subjects
			case *rbacv1.Role:
				if o.Namespace == "kube-node-lease" {
					t.Errorf("%v: a kube-node-lease Role: the Node authorizer gives a node its own lease", set)
				}
				continue
			default:
				continue
			}
			for _, s := range subjects {
				if s.Kind == rbacv1.ServiceAccountKind && s.Name == sa && s.Namespace == "runlet-system" {
					if ref.Kind != "ClusterRole" || !want[ref.Name] {
						t.Errorf("%v: runlet's ServiceAccount %s is bound to %s %s", set, sa, ref.Kind, ref.Name)
					}
					got[ref.Name] = true
				}
			}
		}
		if len(got) != len(want) {
			t.Errorf("%v: runlet's ServiceAccount %s is bound to %v; want exactly %v", set, sa, got, want)
		}
		// Every ClusterRole the chart makes is the uninstall hook's.
		for _, o := range r.objs {
			if cr, ok := o.(*rbacv1.ClusterRole); ok && !strings.HasSuffix(cr.Name, "-uninstall") {
				t.Errorf("%v: ClusterRole %s: runlet's rights come from its node identity", set, cr.Name)
			}
		}
	}
	for _, o := range render(t, "edge", "rbac.create=false").objs {
		switch o.(type) {
		case *rbacv1.ClusterRole, *rbacv1.Role, *rbacv1.ClusterRoleBinding, *rbacv1.RoleBinding:
			t.Errorf("rbac.create=false still renders %T", o)
		}
	}
}

func modeOf(set []string) string {
	for _, s := range set {
		if m, ok := strings.CutPrefix(s, "mode="); ok {
			return m
		}
	}
	return "host"
}

// In every mode runlet takes its node identity by TLS bootstrap: the pod's ServiceAccount token, in a
// kubeconfig with no server (runlet takes the in-cluster address), is the bootstrap credential; the
// node's certificate and kubeconfig are kept under the node's root dir, which outlives the pod in host
// and perHost modes.
func TestNodeIdentityByBootstrap(t *testing.T) {
	for _, tc := range []struct {
		set            []string
		node, rootDir  string
		stateOnTheHost bool
	}{
		{nil, "edge", "/var/lib/runlet/edge", true},
		{[]string{"mode=perHost"}, "edge-$(HOST_NODE_NAME)", "/var/lib/runlet/edge-$(HOST_NODE_NAME)", true},
		{[]string{"mode=remote", "podman.url=tcp://podman-host:8888"}, "edge", "/var/lib/runlet/edge", false},
	} {
		mode := modeOf(tc.set)
		r := render(t, "edge", tc.set...)
		spec := r.podSpec(t, mode)
		c := spec.Containers[0]
		if spec.AutomountServiceAccountToken == nil || !*spec.AutomountServiceAccountToken {
			t.Errorf("%s: automountServiceAccountToken %v; the token is the bootstrap credential", mode, spec.AutomountServiceAccountToken)
		}
		if got, _ := arg(c.Args, "nodename"); got != tc.node {
			t.Errorf("%s: --nodename=%q, want %q", mode, got, tc.node)
		}
		if got, _ := arg(c.Args, "root-dir"); got != tc.rootDir {
			t.Errorf("%s: --root-dir=%q, want %q", mode, got, tc.rootDir)
		}
		for _, name := range []string{"kubeconfig", "cert-dir"} {
			if v, ok := arg(c.Args, name); ok {
				t.Errorf("%s: --%s=%s; want runlet's default under the root dir", mode, name, v)
			}
		}
		if stateOnTheHost := hostMounts(spec, c)["/var/lib/runlet"].hostPath.Path == "/var/lib/runlet"; stateOnTheHost != tc.stateOnTheHost {
			t.Errorf("%s: the state dir on the host %v, want %v", mode, stateOnTheHost, tc.stateOnTheHost)
		}
		bootstrap, _ := arg(c.Args, "bootstrap-kubeconfig")
		config, _ := arg(c.Args, "config")
		cm := r.configMap(t)
		for flag, path := range map[string]string{"bootstrap-kubeconfig": bootstrap, "config": config} {
			if key := mountedConfigMapKey(spec, c, cm.Name, path); cm.Data[key] == "" {
				t.Errorf("%s: --%s=%q is not a file of ConfigMap %s mounted in runlet's container", mode, flag, path, cm.Name)
			}
		}
		kc, err := clientcmd.Load([]byte(cm.Data[mountedConfigMapKey(spec, c, cm.Name, bootstrap)]))
		if err != nil {
			t.Fatalf("%s: the bootstrap kubeconfig: %v", mode, err)
		}
		ctx := kc.Contexts[kc.CurrentContext]
		if ctx == nil || kc.Clusters[ctx.Cluster] == nil || kc.AuthInfos[ctx.AuthInfo] == nil {
			t.Fatalf("%s: the bootstrap kubeconfig has no complete current context: %+v", mode, kc)
		}
		cluster, user := kc.Clusters[ctx.Cluster], kc.AuthInfos[ctx.AuthInfo]
		if cluster.Server != "" {
			t.Errorf("%s: the bootstrap kubeconfig names server %q; want none (the in-cluster address)", mode, cluster.Server)
		}
		if cluster.CertificateAuthority != "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt" {
			t.Errorf("%s: certificate-authority %q; want the ServiceAccount's ca.crt", mode, cluster.CertificateAuthority)
		}
		if user.TokenFile != "/var/run/secrets/kubernetes.io/serviceaccount/token" || user.Token != "" ||
			user.ClientCertificate != "" || user.Username != "" || user.Exec != nil {
			t.Errorf("%s: the bootstrap user %+v; want the ServiceAccount's token file only", mode, user)
		}
		if cfg := r.kubeletConfig(t); !cfg.RotateCertificates {
			t.Errorf("%s: rotateCertificates off: the node's client certificate would expire", mode)
		}
	}
}

// mountedConfigMapKey is the key of ConfigMap name that path is in c, or "".
func mountedConfigMapKey(spec v1.PodSpec, c v1.Container, name, path string) string {
	for _, m := range c.VolumeMounts {
		key, ok := strings.CutPrefix(path, m.MountPath+"/")
		if !ok || m.SubPath != "" {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name == m.Name && v.ConfigMap != nil && v.ConfigMap.Name == name && len(v.ConfigMap.Items) == 0 {
				return key
			}
		}
	}
	return ""
}

// The values that have a KubeletConfiguration field are in the config file, which runlet's own loader
// reads without a warning; the flags that stand for those fields are not given.
func TestConfigFile(t *testing.T) {
	for _, set := range [][]string{nil, {"mode=perHost"}, {"mode=remote", "podman.url=tcp://podman-host:8888"}} {
		mode := modeOf(set)
		r := render(t, "edge", append(set, "maxPods=42", "kubeletPort=10500", "nodeTaints={dedicated=edge:NoExecute,gpu:PreferNoSchedule}",
			"tls.secretName=tls", "tls.bootstrap=true", "clientCA.configMapName=ca", "network.podCIDR=10.244.7.0/24",
			"kubeletConfig.clusterDomain=cluster.local", "kubeletConfig.clusterDNS={10.96.0.10}",
			"kubeletConfig.authentication.webhook.enabled=true")...)
		c := r.podSpec(t, mode).Containers[0]
		cfg := r.kubeletConfig(t)
		if cfg.MaxPods != 42 || cfg.Port != 10500 || cfg.ClusterDomain != "cluster.local" || len(cfg.ClusterDNS) != 1 || cfg.ClusterDNS[0] != "10.96.0.10" {
			t.Errorf("%s: maxPods %d port %d clusterDomain %q clusterDNS %v", mode, cfg.MaxPods, cfg.Port, cfg.ClusterDomain, cfg.ClusterDNS)
		}
		if cfg.TLSCertFile != "/etc/runlet/tls/tls.crt" || cfg.TLSPrivateKeyFile != "/etc/runlet/tls/tls.key" || !cfg.ServerTLSBootstrap {
			t.Errorf("%s: tlsCertFile %q tlsPrivateKeyFile %q serverTLSBootstrap %v", mode, cfg.TLSCertFile, cfg.TLSPrivateKeyFile, cfg.ServerTLSBootstrap)
		}
		if cfg.Authentication.X509.ClientCAFile != "/etc/runlet/client-ca/ca.crt" || cfg.Authentication.Webhook.Enabled == nil || !*cfg.Authentication.Webhook.Enabled {
			t.Errorf("%s: authentication %+v", mode, cfg.Authentication)
		}
		if (cfg.PodCIDR == "10.244.7.0/24") != (mode != "remote") {
			t.Errorf("%s: podCIDR %q (a remote podman's pods keep its network)", mode, cfg.PodCIDR)
		}
		var taints []string
		for _, tt := range cfg.RegisterWithTaints {
			taints = append(taints, tt.ToString())
		}
		if got := strings.Join(taints, ","); got != "virtual-kubelet.io/provider=runlet:NoSchedule,dedicated=edge:NoExecute,gpu:PreferNoSchedule" {
			t.Errorf("%s: registerWithTaints %s", mode, got)
		}
		if p := port(t, c, "kubelet"); p.ContainerPort != cfg.Port {
			t.Errorf("%s: container port %d, config port %d", mode, p.ContainerPort, cfg.Port)
		}
		for _, name := range []string{"kubelet-port", "max-pods", "register-with-taints", "pod-cidr", "tls-cert-file",
			"tls-private-key-file", "client-ca-file", "cluster-dns", "cluster-domain"} {
			if v, ok := arg(c.Args, name); ok {
				t.Errorf("%s: --%s=%s; the config file has the field", mode, name, v)
			}
		}
		for _, a := range c.Args {
			if a == "--bootstrap-serving-cert" || a == "--rotate-server-certificates" {
				t.Errorf("%s: %s; the config file has serverTLSBootstrap", mode, a)
			}
		}
	}
	// A field the chart sets from a value of its own is refused in kubeletConfig.
	for _, set := range []string{"kubeletConfig.port=10250", "kubeletConfig.authentication.x509.clientCAFile=/ca.crt"} {
		_, err := helm(t, "template", "x", filepath.Join(repoRoot(t), "charts", "runlet"), "--kube-version", kubeVersion, "--set", set)
		if err == nil || !strings.Contains(err.Error(), "the chart sets it from") {
			t.Errorf("--set %s: %v; want it refused", set, err)
		}
	}
}

// NodeRestriction refuses a node the labels under kubernetes.io and k8s.io that are not the kubelet's:
// the chart sets none, and refuses a nodeLabels value that would be.
func TestNodeLabelsPassNodeRestriction(t *testing.T) {
	c := render(t, "edge", `nodeLabels.topology\.kubernetes\.io/zone=z1`, `nodeLabels.node\.kubernetes\.io/pool=a`,
		`nodeLabels.example\.com/team=x`).deployment(t).Spec.Template.Spec.Containers[0]
	got, _ := arg(c.Args, "node-labels")
	for _, want := range []string{"runlet.dev/instance=edge", "topology.kubernetes.io/zone=z1", "node.kubernetes.io/pool=a", "example.com/team=x"} {
		if !strings.Contains(got, want) {
			t.Errorf("--node-labels=%s; want %s in it", got, want)
		}
	}
	for _, key := range []string{`node-role\.kubernetes\.io/worker`, `kubernetes\.io/role`, `k8s\.io/x`, `example\.k8s\.io/y`, `node-restriction\.kubernetes\.io/z`} {
		_, err := helm(t, "template", "x", filepath.Join(repoRoot(t), "charts", "runlet"), "--kube-version", kubeVersion, "--set", "nodeLabels."+key+"=a")
		if err == nil || !strings.Contains(err.Error(), "NodeRestriction") {
			t.Errorf("nodeLabels.%s: %v; want it refused", key, err)
		}
	}
}

func TestUninstallHook(t *testing.T) {
	for _, tc := range []struct {
		set            []string
		pods, workload string
	}{
		{nil, "stop", "deployment/edge-runlet"},
		{[]string{"uninstall.pods=keep", "mode=perHost"}, "keep", "daemonset/edge-runlet"},
	} {
		j := render(t, "edge", tc.set...).job(t)
		if j.Annotations["helm.sh/hook"] != "pre-delete" {
			t.Errorf("%v: job annotations %v; want a pre-delete hook", tc.set, j.Annotations)
		}
		c := j.Spec.Template.Spec.Containers[0]
		if c.Args[0] != "uninstall" {
			t.Errorf("%v: args %v", tc.set, c.Args)
		}
		for name, want := range map[string]string{"pods": tc.pods, "workload": tc.workload,
			"node-selector": "runlet.dev/name=runlet,runlet.dev/instance=edge", "namespace": "runlet-system"} {
			if got, _ := arg(c.Args, name); got != want {
				t.Errorf("%v: --%s=%q, want %q", tc.set, name, got, want)
			}
		}
		if c.Image != "localhost/runlet:v0.1.0" {
			t.Errorf("hook image %q", c.Image)
		}
		// runlet tears down its pods' networks itself while the hook drains the nodes: the hook needs
		// no host access for that.
		for _, v := range j.Spec.Template.Spec.Volumes {
			if v.HostPath != nil {
				t.Errorf("%v: the hook mounts host path %s", tc.set, v.HostPath.Path)
			}
		}
		if j.Spec.Template.Labels["app.kubernetes.io/component"] == "node" {
			t.Error("the hook's pod carries runlet's selector labels: it would wait for itself")
		}
		checkUninstallAccount(t, render(t, "edge", tc.set...), modeOf(tc.set), j.Spec.Template.Spec.ServiceAccountName)
	}
	// Without a ServiceAccount made for runlet the hook still has its own, never runlet's or "default".
	r := render(t, "edge", "serviceAccount.create=false")
	checkUninstallAccount(t, r, "host", r.job(t).Spec.Template.Spec.ServiceAccountName)
	r = render(t, "edge", "serviceAccount.create=false", "serviceAccount.name=node", "uninstall.serviceAccountName=cleaner")
	if sa := r.job(t).Spec.Template.Spec.ServiceAccountName; sa != "cleaner" {
		t.Errorf("the hook runs as %q, want uninstall.serviceAccountName", sa)
	}
	for _, o := range r.objs {
		if sa, ok := o.(*v1.ServiceAccount); ok {
			t.Errorf("ServiceAccount %s made with uninstall.serviceAccountName and serviceAccount.create=false", sa.Name)
		}
	}
}

// checkUninstallAccount: the hook runs as an account of its own, whose rights are exactly what
// `runlet uninstall` asks the API (internal/uninstall), and which runlet's pod does not use.
func checkUninstallAccount(t *testing.T, r rendered, mode, sa string) {
	t.Helper()
	if runlet := r.podSpec(t, mode).ServiceAccountName; sa == runlet {
		t.Errorf("the uninstall hook runs as runlet's ServiceAccount %s", sa)
	}
	var made bool
	rights := map[string]string{}
	for _, o := range r.objs {
		switch o := o.(type) {
		case *v1.ServiceAccount:
			made = made || o.Name == sa
		case *rbacv1.ClusterRole:
			for _, rule := range o.Rules {
				for _, res := range rule.Resources {
					rights["cluster "+rule.APIGroups[0]+"/"+res] = strings.Join(rule.Verbs, ",")
				}
			}
		case *rbacv1.Role:
			for _, rule := range o.Rules {
				for _, res := range rule.Resources {
					rights[o.Namespace+" "+rule.APIGroups[0]+"/"+res] = strings.Join(rule.Verbs, ",") + " " + strings.Join(rule.ResourceNames, ",")
				}
			}
		case *rbacv1.ClusterRoleBinding:
			for _, s := range o.Subjects {
				if s.Name == sa && o.RoleRef.Name != sa {
					t.Errorf("the hook's account is bound to %s", o.RoleRef.Name)
				}
			}
		}
	}
	if !made {
		t.Errorf("no ServiceAccount %s for the hook", sa)
	}
	want := map[string]string{
		"cluster /nodes":                 "get,list,patch,delete",
		"cluster /pods":                  "list,delete",
		"runlet-system apps/deployments": "get,delete edge-runlet",
		"runlet-system apps/daemonsets":  "get,delete edge-runlet",
	}
	if len(rights) != len(want) {
		t.Errorf("the hook's rights %v; want %v", rights, want)
	}
	for res, v := range want {
		if rights[res] != v {
			t.Errorf("the hook's %s: %q, want %q", res, rights[res], v)
		}
	}
}

func TestAPIServerOverride(t *testing.T) {
	r := render(t, "edge", "apiServer.host=127.0.0.1", "apiServer.port=27443")
	for _, c := range []v1.Container{r.deployment(t).Spec.Template.Spec.Containers[0], r.job(t).Spec.Template.Spec.Containers[0]} {
		env := map[string]string{}
		for _, e := range c.Env {
			env[e.Name] = e.Value
		}
		if env["KUBERNETES_SERVICE_HOST"] != "127.0.0.1" || env["KUBERNETES_SERVICE_PORT"] != "27443" {
			t.Errorf("%s: env %v; want the apiserver override", c.Name, env)
		}
	}
	for _, c := range render(t, "edge").deployment(t).Spec.Template.Spec.Containers {
		for _, e := range c.Env {
			if strings.HasPrefix(e.Name, "KUBERNETES_SERVICE") {
				t.Errorf("without the override the in-cluster defaults must stay: %s set", e.Name)
			}
		}
	}
}

func TestSchemaRejectsBadValues(t *testing.T) {
	chart := filepath.Join(repoRoot(t), "charts", "runlet")
	for set, want := range map[string]string{
		"kubeletPort=abc":                    "kubeletPort",
		"metricsPort=70000":                  "metricsPort",
		"metricsAddress=localhost":           "metricsAddress",
		"metricsAddress=abc":                 "metricsAddress",
		"image.repository=":                  "image/repository",
		"mode=elsewhere":                     "mode",
		"uninstall.pods=leave":               "uninstall/pods",
		"mode=remote":                        "podman/url",
		"nodeName=Bad_Name":                  "nodeName",
		"kubeletPortt=1":                     "kubeletPortt",
		"network.plugin=weave":               "network/plugin",
		"network.podCIDR=abc":                "network/podCIDR",
		"network.nonMasqueradeCIDR=10.0.0.0": "network/nonMasqueradeCIDR",
		"network.cniBinDir={opt/cni/bin}":    "network/cniBinDir",
		`network.cniBinDir[0]=/a\,/b`:        "network/cniBinDir", // --cni-bin-dir is comma-separated
		"network.hostPaths={run/flannel}":    "network/hostPaths",
		"runtime=crun":                       "runtime",
		"runtime=runc,hostPID=false":         "hostPID",
	} {
		_, err := helm(t, "template", "x", chart, "--kube-version", kubeVersion, "--set", set)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--set %s: got %v, want an error naming %s", set, err, want)
		}
	}
}

// runtime runc runs the pods on the host with runc and conmon from runlet's image: no podman socket,
// the host's cgroup hierarchy at its own path (the pods' cgroups are made at its top, not below runlet's
// container), the runc backend's mount dir and the pinned namespaces reaching the host, and the host's
// PID namespace, which the conmons and pause processes outlive runlet's container in.
func TestRuncRuntime(t *testing.T) {
	for _, mode := range []string{"host", "perHost"} {
		spec := render(t, "edge", "mode="+mode, "runtime=runc").podSpec(t, mode)
		c := spec.Containers[0]
		if got, _ := arg(c.Args, "runtime"); got != "runc" {
			t.Errorf("%s: --runtime=%q, want runc", mode, got)
		}
		if v, ok := arg(c.Args, "podman-socket"); ok {
			t.Errorf("%s: --podman-socket=%s with runtime runc", mode, v)
		}
		if !spec.HostPID || !spec.HostNetwork {
			t.Errorf("%s: hostPID %v hostNetwork %v; want both", mode, spec.HostPID, spec.HostNetwork)
		}
		mounts := hostMounts(spec, c)
		for path, bidirectional := range map[string]bool{"/sys/fs/cgroup": false, "/run/runlet/runc": true, "/var/lib/runlet": true, "/run/netns": true} {
			m, ok := mounts[path]
			if !ok || m.hostPath.Path != path || m.ReadOnly {
				t.Errorf("%s: %s is not mounted read-write from the host's %s: %+v", mode, path, path, m)
				continue
			}
			if bidi := m.MountPropagation != nil && *m.MountPropagation == v1.MountPropagationBidirectional; bidi != bidirectional {
				t.Errorf("%s: %s Bidirectional %v, want %v", mode, path, bidi, bidirectional)
			}
		}
		for _, path := range []string{"/run/podman", "/run/libpod/exits", "/run/runlet/podman"} {
			if _, ok := mounts[path]; ok {
				t.Errorf("%s: podman's %s is mounted with runtime runc", mode, path)
			}
		}
	}
	for _, set := range [][]string{{"mode=remote", "podman.url=tcp://podman:8080"}, {"hostNetwork=false"}} {
		args := []string{"template", "x", filepath.Join(repoRoot(t), "charts", "runlet"), "--kube-version", kubeVersion, "--set", "runtime=runc"}
		for _, s := range set {
			args = append(args, "--set", s)
		}
		if _, err := helm(t, args...); err == nil || !strings.Contains(err.Error(), "runc") {
			t.Errorf("runtime=runc with %v: got %v, want a refusal naming runc", set, err)
		}
	}
}

// deploy/runlet.yaml is the chart's rendering (make manifests); a change to one needs the other.
func TestManifestAgreesWithTheChart(t *testing.T) {
	helmBinary(t)
	root := repoRoot(t)
	cmd := exec.Command("bash", filepath.Join(root, "hack", "manifests.sh"))
	cmd.Env = append(os.Environ(), "HELM="+helmBinary(t))
	want, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/manifests.sh: %v", err)
	}
	got, err := os.ReadFile(filepath.Join(root, "deploy", "runlet.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("deploy/runlet.yaml does not agree with charts/runlet: run make manifests")
	}
	objs := decode(t, string(got))
	var ns, dep bool
	for _, o := range objs {
		switch o := o.(type) {
		case *v1.Namespace:
			ns = o.Name == "runlet"
		case *appsv1.Deployment:
			dep = o.Namespace == "runlet"
		case *batchv1.Job:
			t.Error("deploy/runlet.yaml holds the uninstall hook: plain manifests have no hooks")
		}
	}
	if !ns || !dep {
		t.Errorf("deploy/runlet.yaml: namespace %v, deployment in it %v", ns, dep)
	}
}

// hostMount is a container's mount of a hostPath volume.
type hostMount struct {
	v1.VolumeMount
	hostPath v1.HostPathVolumeSource
}

// hostMounts are a pod's hostPath mounts by their path in the container.
func hostMounts(spec v1.PodSpec, c v1.Container) map[string]hostMount {
	vols := map[string]*v1.HostPathVolumeSource{}
	for _, v := range spec.Volumes {
		vols[v.Name] = v.HostPath
	}
	out := map[string]hostMount{}
	for _, m := range c.VolumeMounts {
		if hp := vols[m.Name]; hp != nil {
			out[m.MountPath] = hostMount{VolumeMount: m, hostPath: *hp}
		}
	}
	return out
}

// networkArgs are runlet's flags of the pod network.
var networkArgs = []string{"network-plugin", "cni-conf-dir", "cni-bin-dir", "pod-cidr", "non-masquerade-cidr"}

// In host and perHost modes runlet owns the pod network from inside its pod: it pins namespaces under
// /run/netns for podman on the host, reads the host's CNI configuration and plugins, shares host-local's
// leases with the host kubelet's pods, and changes the host's links and iptables.
func TestPodNetworkOnTheHost(t *testing.T) {
	for _, mode := range []string{"host", "perHost"} {
		r := render(t, "edge", "mode="+mode)
		spec := r.podSpec(t, mode)
		c := spec.Containers[0]
		if !spec.HostNetwork || c.SecurityContext == nil || c.SecurityContext.Privileged == nil || !*c.SecurityContext.Privileged {
			t.Errorf("%s: hostNetwork %v, security context %+v; the pod network needs the host's network, privileged", mode, spec.HostNetwork, c.SecurityContext)
		}
		for name, want := range map[string]string{
			"network-plugin": "auto", "cni-conf-dir": "/etc/cni/net.d",
			"cni-bin-dir": "/opt/cni/bin,/usr/lib/cni", // the host's first, the image's last
		} {
			if got, _ := arg(c.Args, name); got != want {
				t.Errorf("%s: --%s=%q, want %q", mode, name, got, want)
			}
		}
		for _, name := range []string{"pod-cidr", "non-masquerade-cidr"} {
			if v, ok := arg(c.Args, name); ok {
				t.Errorf("%s: --%s=%s by default; want runlet's default", mode, name, v)
			}
		}
		if cfg := r.kubeletConfig(t); cfg.Has("podCIDR") {
			t.Errorf("%s: config podCIDR %q by default; want the node's own", mode, cfg.PodCIDR)
		}
		mounts := hostMounts(spec, c)
		dir, file := v1.HostPathDirectoryOrCreate, v1.HostPathFileOrCreate
		for path, want := range map[string]struct {
			readOnly, bidirectional bool
			typ                     v1.HostPathType
		}{
			"/run/netns":        {bidirectional: true, typ: dir},
			"/etc/cni/net.d":    {readOnly: true, typ: dir},
			"/opt/cni/bin":      {readOnly: true, typ: dir},
			"/var/lib/cni":      {typ: dir},
			"/run/xtables.lock": {typ: file},
		} {
			m, ok := mounts[path]
			if !ok {
				t.Errorf("%s: %s is not mounted from the host", mode, path)
				continue
			}
			if m.hostPath.Path != path || m.hostPath.Type == nil || *m.hostPath.Type != want.typ {
				t.Errorf("%s: %s mounts host path %s type %v; want the same path, %s", mode, path, m.hostPath.Path, m.hostPath.Type, want.typ)
			}
			if m.ReadOnly != want.readOnly {
				t.Errorf("%s: %s readOnly %v, want %v", mode, path, m.ReadOnly, want.readOnly)
			}
			bidi := m.MountPropagation != nil && *m.MountPropagation == v1.MountPropagationBidirectional
			if bidi != want.bidirectional {
				t.Errorf("%s: %s Bidirectional %v, want %v (podman on the host must see the pinned namespaces)", mode, path, bidi, want.bidirectional)
			}
		}
	}
}

func TestPodNetworkValues(t *testing.T) {
	r := render(t, "edge", "network.plugin=kubenet", "network.podCIDR=10.244.7.0/24",
		"network.nonMasqueradeCIDR=10.96.0.0/12", "network.cniBinDir={/opt/cni/bin,/usr/libexec/cni}",
		"network.hostPaths={/run/flannel}")
	spec := r.deployment(t).Spec.Template.Spec
	c := spec.Containers[0]
	if got := r.kubeletConfig(t).PodCIDR; got != "10.244.7.0/24" {
		t.Errorf("config podCIDR %q, want 10.244.7.0/24", got)
	}
	for name, want := range map[string]string{
		"network-plugin": "kubenet", "non-masquerade-cidr": "10.96.0.0/12",
		"cni-bin-dir": "/opt/cni/bin,/usr/libexec/cni,/usr/lib/cni",
	} {
		if got, _ := arg(c.Args, name); got != want {
			t.Errorf("--%s=%q, want %q", name, got, want)
		}
	}
	if v, ok := arg(c.Args, "cni-conf-dir"); ok {
		t.Errorf("kubenet reads no CNI configuration, yet --cni-conf-dir=%s", v)
	}
	mounts := hostMounts(spec, c)
	for _, p := range []string{"/etc/cni/net.d", "/var/lib/cni"} {
		if _, ok := mounts[p]; ok {
			t.Errorf("kubenet: %s mounted; its leases are runlet's own", p)
		}
	}
	for _, p := range []string{"/run/netns", "/opt/cni/bin", "/usr/libexec/cni", "/run/flannel", "/run/xtables.lock"} {
		if _, ok := mounts[p]; !ok {
			t.Errorf("kubenet: %s not mounted", p)
		}
	}
	if m := mounts["/run/flannel"]; m.ReadOnly || m.hostPath.Path != "/run/flannel" {
		t.Errorf("network.hostPaths: %+v; want the host's path, read-write", m)
	}

	// The image's own plugins are searched last, once, unless the host's /usr/lib/cni replaces them.
	c = render(t, "edge", "network.cniBinDir={/usr/lib/cni}").deployment(t).Spec.Template.Spec.Containers[0]
	if got, _ := arg(c.Args, "cni-bin-dir"); got != "/usr/lib/cni" {
		t.Errorf("--cni-bin-dir=%q, want /usr/lib/cni once", got)
	}
	// Two mounts on one path make an invalid pod: the chart refuses them.
	_, err := helm(t, "template", "x", filepath.Join(repoRoot(t), "charts", "runlet"), "--kube-version", kubeVersion,
		"--set", "network.hostPaths={/var/lib/cni}")
	if err == nil || !strings.Contains(err.Error(), "/var/lib/cni would be mounted twice") {
		t.Errorf("network.hostPaths={/var/lib/cni}: %v; want it refused", err)
	}
}

// With a remote podman runlet does no CNI: pods keep that podman's network, and the chart neither
// passes the network's flags nor mounts anything of the host, whatever network.* says.
func TestRemoteModeHasNoPodNetwork(t *testing.T) {
	r := render(t, "far", "mode=remote", "podman.url=tcp://podman-host:8888", "network.plugin=kubenet",
		"network.podCIDR=10.244.7.0/24", "network.nonMasqueradeCIDR=10.96.0.0/12", "network.hostPaths={/run/flannel}")
	spec := r.deployment(t).Spec.Template.Spec
	c := spec.Containers[0]
	if cfg := r.kubeletConfig(t); cfg.Has("podCIDR") {
		t.Errorf("remote mode: config podCIDR %q", cfg.PodCIDR)
	}
	for _, name := range networkArgs {
		if v, ok := arg(c.Args, name); ok {
			t.Errorf("remote mode: --%s=%s", name, v)
		}
	}
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			t.Errorf("remote mode mounts host path %s", v.HostPath.Path)
		}
	}
	for _, m := range c.VolumeMounts {
		if strings.Contains(m.MountPath, "cni") || strings.HasPrefix(m.MountPath, "/run/") || m.MountPropagation != nil {
			t.Errorf("remote mode mounts %s (%s)", m.MountPath, m.Name)
		}
	}
}
