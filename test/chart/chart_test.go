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

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
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

// arg returns the value of --name=value in args.
// podSpec is the runlet pod's spec: the DaemonSet's in perHost mode, else the Deployment's.
func (r rendered) podSpec(t *testing.T, mode string) v1.PodSpec {
	if mode == "perHost" {
		return r.daemonSet(t).Spec.Template.Spec
	}
	return r.deployment(t).Spec.Template.Spec
}

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
	if _, ok := arg(c.Args, "client-ca-file"); ok {
		t.Error("--client-ca-file set by default: runlet reads the apiserver's client CA from the cluster")
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
	if got, _ := arg(c.Args, "kubelet-port"); got != strconv.Itoa(int(kubelet.ContainerPort)) {
		t.Errorf("--kubelet-port=%s, port %d", got, kubelet.ContainerPort)
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
	a := render(t, "edge-a").deployment(t)
	b := render(t, "edge-b").deployment(t)
	ca, cb := a.Spec.Template.Spec.Containers[0], b.Spec.Template.Spec.Containers[0]
	for _, name := range []string{"nodename", "root-dir", "kubelet-port", "metrics-addr"} {
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

// Least privilege: what runlet needs (it and the branches that read more of the API), and no more.
func TestRBACIsLeastPrivilege(t *testing.T) {
	check := func(r rendered, wantCSR bool) {
		t.Helper()
		var cr *rbacv1.ClusterRole
		var leaseRole *rbacv1.Role
		for _, o := range r.objs {
			switch o := o.(type) {
			case *rbacv1.ClusterRole:
				if !strings.HasSuffix(o.Name, "-uninstall") {
					cr = o
				}
			case *rbacv1.Role:
				if o.Namespace == "kube-node-lease" {
					leaseRole = o
				}
			}
		}
		if cr == nil || leaseRole == nil {
			t.Fatal("ClusterRole or kube-node-lease Role missing")
		}
		verbs := map[string]string{}
		for _, rule := range cr.Rules {
			for _, g := range rule.APIGroups {
				for _, res := range rule.Resources {
					verbs[g+"/"+res] = strings.Join(rule.Verbs, ",")
					if strings.Contains(verbs[g+"/"+res], "*") || res == "*" {
						t.Errorf("wildcard in %v", rule)
					}
				}
			}
		}
		for res, want := range map[string]string{
			"/pods":                              "get,list,watch,create,delete",
			"/pods/status":                       "update,patch",
			"/nodes":                             "get,list,watch,create",
			"/nodes/status":                      "update,patch",
			"/serviceaccounts/token":             "create",
			"/configmaps":                        "get,list,watch",
			"/secrets":                           "get,list,watch",
			"/persistentvolumeclaims":            "get,list,watch",
			"/events":                            "create,patch",
			"authentication.k8s.io/tokenreviews": "create",
			"authorization.k8s.io/subjectaccessreviews":  "create",
			"certificates.k8s.io/clustertrustbundles":    "get,list,watch",
			"certificates.k8s.io/podcertificaterequests": "get,list,watch,create",
		} {
			if verbs[res] != want {
				t.Errorf("%s: verbs %q, want %q", res, verbs[res], want)
			}
		}
		if _, ok := verbs["coordination.k8s.io/leases"]; ok {
			t.Error("leases granted cluster-wide; only kube-node-lease needs them")
		}
		if got := verbs["certificates.k8s.io/certificatesigningrequests"]; (got != "") != wantCSR {
			t.Errorf("CSR verbs %q with bootstrap=%v", got, wantCSR)
		}
		if len(leaseRole.Rules) != 1 || leaseRole.Rules[0].Resources[0] != "leases" {
			t.Errorf("kube-node-lease Role: %+v", leaseRole.Rules)
		}
	}
	check(render(t, "edge"), false)
	check(render(t, "edge", "tls.bootstrap=true"), true)
	for _, o := range render(t, "edge", "rbac.create=false").objs {
		switch o.(type) {
		case *rbacv1.ClusterRole, *rbacv1.Role, *rbacv1.ClusterRoleBinding, *rbacv1.RoleBinding:
			t.Errorf("rbac.create=false still renders %T", o)
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
		spec := render(t, "edge", "mode="+mode).podSpec(t, mode)
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
	spec := render(t, "edge", "network.plugin=kubenet", "network.podCIDR=10.244.7.0/24",
		"network.nonMasqueradeCIDR=10.96.0.0/12", "network.cniBinDir={/opt/cni/bin,/usr/libexec/cni}",
		"network.hostPaths={/run/flannel}").deployment(t).Spec.Template.Spec
	c := spec.Containers[0]
	for name, want := range map[string]string{
		"network-plugin": "kubenet", "pod-cidr": "10.244.7.0/24", "non-masquerade-cidr": "10.96.0.0/12",
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
	spec := render(t, "far", "mode=remote", "podman.url=tcp://podman-host:8888", "network.plugin=kubenet",
		"network.podCIDR=10.244.7.0/24", "network.nonMasqueradeCIDR=10.96.0.0/12", "network.hostPaths={/run/flannel}").
		deployment(t).Spec.Template.Spec
	c := spec.Containers[0]
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
