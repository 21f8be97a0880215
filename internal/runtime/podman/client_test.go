package podman

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/cgroups"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
)

var podLabels = map[string]string{
	runtime.LabelManaged: "true", runtime.LabelPodUID: "0123456789abcdef-uid",
	runtime.LabelPodNamespace: "ns", runtime.LabelPodName: "web",
}

func TestCreateContainerSpec(t *testing.T) {
	cases := []struct {
		name                 string
		command, args        []string
		wantEntry, wantCmd   []string
		wantEntryKeyInBody   bool
		wantCommandKeyInBody bool
	}{
		{"image defaults", nil, nil, nil, nil, false, false},
		{"command only", []string{"/bin/app"}, nil, []string{"/bin/app"}, nil, true, false},
		{"args only keep the image entrypoint", nil, []string{"--flag"}, nil, []string{"--flag"}, false, true},
		{"both", []string{"/bin/app"}, []string{"--flag"}, []string{"/bin/app"}, []string{"--flag"}, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakePodman(t)
			f.json("POST /containers/create", 201, map[string]any{"Id": "c1"})
			f.json("GET /images/localhost/img:1/json", 200, map[string]any{"Id": "img1",
				"Config": map[string]any{"Env": []string{"PATH=/img/bin", "B=image", "IMG=1"}}})
			b := f.backend()
			b.sandboxes["pod1"] = sandboxMeta{labels: podLabels, infraID: "infra1"}
			id, err := b.CreateContainer(context.Background(), "pod1", runtime.ContainerConfig{
				Name: "app", Attempt: 2, Image: "localhost/img:1", Command: tc.command, Args: tc.args,
				Env: []string{"A=1", "B=x=y", "A=2"}, WorkingDir: "/w", Stdin: true, TTY: true,
				Security:    runtime.SecurityConfig{RunAsUser: ptr(int64(1000)), RunAsGroup: ptr(int64(1000))},
				Mounts:      []runtime.Mount{{HostPath: "/h", ContainerPath: "/c", ReadOnly: true}},
				Resources:   runtime.Resources{CPUMillis: 250, MemoryBytes: 64 << 20},
				Labels:      map[string]string{runtime.LabelSpecHash: "h1", runtime.LabelManaged: "false", runtime.LabelContainerName: "app"},
				StopTimeout: 1500 * time.Millisecond,
			})
			if err != nil || id != "c1" {
				t.Fatalf("CreateContainer = %q, %v", id, err)
			}
			body := f.sent("POST /containers/create")[0].Body
			var raw map[string]json.RawMessage
			var spec libpod.ContainerSpec
			if err := json.Unmarshal(body, &raw); err != nil || json.Unmarshal(body, &spec) != nil {
				t.Fatalf("body %s: %v", body, err)
			}
			_, hasEntry := raw["entrypoint"]
			_, hasCmd := raw["command"]
			if hasEntry != tc.wantEntryKeyInBody || hasCmd != tc.wantCommandKeyInBody ||
				!reflect.DeepEqual(spec.Entrypoint, tc.wantEntry) || !reflect.DeepEqual(spec.Command, tc.wantCmd) {
				t.Errorf("entrypoint %v (sent %v), command %v (sent %v); want %v, %v", spec.Entrypoint, hasEntry, spec.Command, hasCmd, tc.wantEntry, tc.wantCmd)
			}
			checkSpec(t, spec)
		})
	}
}

func checkSpec(t *testing.T, spec libpod.ContainerSpec) {
	t.Helper()
	// Only the core stamps identity labels: the backend sends them as given.
	wantLabels := map[string]string{runtime.LabelSpecHash: "h1", runtime.LabelManaged: "false", runtime.LabelContainerName: "app"}
	if !reflect.DeepEqual(spec.Labels, wantLabels) {
		t.Errorf("labels = %v; want the caller's %v unchanged", spec.Labels, wantLabels)
	}
	wantRL := []libpod.RLimit{{Type: "nofile", Hard: 20000, Soft: 20000}, {Type: "nproc", Hard: 32768, Soft: 32768}}
	if !reflect.DeepEqual(spec.RLimits, wantRL) {
		t.Errorf("r_limits = %v; want %v", spec.RLimits, wantRL)
	}
	if spec.OCIRuntime != "runc" || spec.RestartPolicy != "no" || spec.Pod != "pod1" || spec.Image != "localhost/img:1" {
		t.Errorf("oci_runtime %q, restart_policy %q, pod %q, image %q", spec.OCIRuntime, spec.RestartPolicy, spec.Pod, spec.Image)
	}
	if spec.StopTimeout == nil || *spec.StopTimeout != 2 {
		t.Errorf("stop_timeout = %v; want 2 (rounded up)", spec.StopTimeout)
	}
	if spec.Name != "ns_web_0123456789ab_app_2" {
		t.Errorf("name = %q", spec.Name)
	}
	// The image's PATH replaces the default, the pod's B the image's; TERM
	// comes with the TTY; podman's own defaults are dropped.
	wantEnv := map[string]string{"PATH": "/img/bin", "TERM": "xterm", "IMG": "1", "A": "2", "B": "x=y"}
	if !reflect.DeepEqual(spec.Env, wantEnv) || !spec.UnsetEnvAll {
		t.Errorf("env = %v, unsetenvall %v; want %v, true", spec.Env, spec.UnsetEnvAll, wantEnv)
	}
	if spec.WorkDir != "/w" || spec.User != "1000:1000" || !spec.Stdin || !spec.Terminal {
		t.Errorf("work_dir %q user %q stdin %v terminal %v", spec.WorkDir, spec.User, spec.Stdin, spec.Terminal)
	}
	wantMounts := []libpod.Mount{{Destination: "/c", Type: "bind", Source: "/h", Options: []string{"rbind", "ro", "rprivate"}}}
	if !reflect.DeepEqual(spec.Mounts, wantMounts) {
		t.Errorf("mounts = %+v", spec.Mounts)
	}
	r := spec.ResourceLimits
	if r == nil || r.CPU == nil || *r.CPU.Quota != 25000 || *r.CPU.Period != 100000 || r.Memory == nil || *r.Memory.Limit != 64<<20 {
		t.Errorf("resource_limits = %+v", r)
	}
}

func TestCreateSandboxSpec(t *testing.T) {
	f := newFakePodman(t)
	f.json("POST /pods/create", 201, map[string]any{"Id": "pod1"})
	f.json("POST /pods/pod1/start", 200, map[string]any{"Id": "pod1", "Errs": nil})
	f.json("GET /containers/ns_web_0123456789ab-infra/json", 200, map[string]any{"Id": "infra1", "State": map[string]any{"Running": true, "Pid": 42},
		"Config":          map[string]any{"Labels": podLabels},
		"NetworkSettings": map[string]any{"IPAddress": "10.88.0.9", "Networks": map[string]any{"podman": map[string]any{"IPAddress": "10.88.0.9"}}}})
	b := f.backend()
	sb, err := b.CreateSandbox(context.Background(), runtime.SandboxConfig{
		PodUID: "0123456789abcdef-uid", Namespace: "ns", Name: "web", Hostname: "web-0",
		Labels: map[string]string{"app": "web", runtime.LabelPodUID: "0123456789abcdef-uid"}, Ports: []runtime.PortMapping{{HostIP: "127.0.0.1", HostPort: 8080, ContainerPort: 80, Protocol: "TCP"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if sb.ID != "pod1" || !reflect.DeepEqual(sb.IPs, []string{"10.88.0.9"}) || sb.State != runtime.SandboxReady {
		t.Errorf("sandbox = %+v", sb)
	}
	var spec libpod.PodSpec
	_ = json.Unmarshal(f.sent("POST /pods/create")[0].Body, &spec)
	want := libpod.PodSpec{Name: "ns_web_0123456789ab", InfraName: "ns_web_0123456789ab-infra", Hostname: "web-0",
		Labels:           map[string]string{"app": "web", runtime.LabelPodUID: "0123456789abcdef-uid"},
		SharedNamespaces: []string{"net", "ipc", "uts"},
		PortMappings:     []libpod.PortMapping{{HostIP: "127.0.0.1", HostPort: 8080, ContainerPort: 80, Protocol: "tcp"}}}
	if !reflect.DeepEqual(spec, want) {
		t.Errorf("pod spec =\n%+v\nwant\n%+v", spec, want)
	}
	// The infra container is found by its name, not by inspecting the pod,
	// and the IP is cached: a second lookup costs no inspect.
	if _, err := b.sandboxMeta(context.Background(), "pod1", ""); err != nil || len(f.sent("GET /containers/ns_web_0123456789ab-infra/json")) != 1 {
		t.Errorf("infra inspected %d times; want once", len(f.sent("GET /containers/ns_web_0123456789ab-infra/json")))
	}
	if n := len(f.sent("GET /pods/pod1/json")); n != 0 {
		t.Errorf("pod inspected %d times; want none", n)
	}
}

// TestPodStartConflictSaysWhy: podman 4.3 answers a pod start that failed
// with 409 and its per-container errors (a host port taken, say); the error
// carries them, so the event names the cause.
func TestPodStartConflictSaysWhy(t *testing.T) {
	f := newFakePodman(t)
	f.json("POST /pods/create", 201, map[string]any{"Id": "pod1"})
	f.json("POST /pods/pod1/start", 409, map[string]any{"Id": "pod1",
		"Errs": []string{"starting container x: cannot listen on the TCP port: listen tcp4 127.0.0.1:39123: bind: address already in use"}})
	f.json("DELETE /pods/pod1", 200, map[string]any{"Id": "pod1"})
	_, err := f.backend().CreateSandbox(context.Background(), runtime.SandboxConfig{PodUID: "u", Namespace: "ns", Name: "n"})
	if err == nil || !strings.Contains(err.Error(), "bind: address already in use") {
		t.Errorf("err = %v; want podman's reason", err)
	}
	if d := f.sent("DELETE /pods/pod1"); len(d) != 1 {
		t.Errorf("pod removals = %+v; want the pod that did not start removed", d)
	}
}

func TestCreateSandboxInfraFailureRemovesPod(t *testing.T) {
	f := newFakePodman(t)
	f.json("POST /pods/create", 201, map[string]any{"Id": "pod1"})
	f.json("POST /pods/pod1/start", 200, map[string]any{"Id": "pod1",
		"Errs": []string{"starting container x: crun: setrlimit `RLIMIT_NOFILE`: Operation not permitted: OCI permission denied"}})
	f.json("DELETE /pods/pod1", 200, map[string]any{"Id": "pod1"})
	_, err := f.backend().CreateSandbox(context.Background(), runtime.SandboxConfig{PodUID: "u", Namespace: "ns", Name: "n"})
	if err == nil || !strings.Contains(err.Error(), "RLIMIT_NOFILE") || !strings.Contains(err.Error(), "default_ulimits") {
		t.Errorf("err = %v; want podman's message and the containers.conf hint", err)
	}
	d := f.sent("DELETE /pods/pod1")
	if len(d) != 1 || d[0].Query["force"][0] != "true" || d[0].Query["timeout"][0] != "0" {
		t.Errorf("pod removal = %+v; want one DELETE force=true timeout=0", d)
	}
}

func TestPullErrorInside200(t *testing.T) {
	f := newFakePodman(t)
	f.json("GET /images/docker.io/library/nope:1/json", 404, map[string]any{"cause": "failed to find image", "message": "failed to find image nope:1"})
	f.handle("POST /images/pull", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(200)
		_, _ = w.Write([]byte(`{"stream":"Trying to pull docker.io/library/nope:1...\n"}` + "\n" +
			`{"error":"initializing source docker://nope:1: pinging container registry registry-1.docker.io: no such host"}` + "\n"))
	})
	_, err := f.backend().EnsureImage(context.Background(), "docker.io/library/nope:1", runtime.PullIfNotPresent,
		[]runtime.Credential{{Server: "https://index.docker.io/v1/", Username: "u", Password: "p"}})
	if !errors.Is(err, runtime.ErrImageNotFound) || !strings.Contains(err.Error(), "pinging container registry") {
		t.Fatalf("err = %v; want ErrImageNotFound with podman's message", err)
	}
	p := f.sent("POST /images/pull")
	if len(p) != 1 || p[0].Query["reference"][0] != "docker.io/library/nope:1" {
		t.Errorf("pull requests = %+v", p)
	}
}

func TestPullSuccessAndPolicies(t *testing.T) {
	f := newFakePodman(t)
	f.handle("POST /images/pull", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"stream":"Writing manifest\n"}` + "\n" + `{"images":["sha1"],"id":"sha1"}` + "\n"))
	})
	f.json("GET /images/localhost/runlet/busybox:latest/json", 200, map[string]any{"Id": "local1"})
	b := f.backend()
	ctx := context.Background()
	if id, err := b.EnsureImage(ctx, "quay.io/x/y:1", runtime.PullAlways, nil); err != nil || id != "sha1" {
		t.Errorf("Always = %q, %v; want sha1", id, err)
	}
	// localhost/ images are never pullable: Always uses the local one.
	if id, err := b.EnsureImage(ctx, "localhost/runlet/busybox:latest", runtime.PullAlways, nil); err != nil || id != "local1" {
		t.Errorf("Always(localhost/) = %q, %v; want local1", id, err)
	}
	if _, err := b.EnsureImage(ctx, "quay.io/x/missing:1", runtime.PullNever, nil); !errors.Is(err, runtime.ErrImageNotFound) {
		t.Errorf("Never(missing) = %v; want ErrImageNotFound", err)
	}
	if n := len(f.sent("POST /images/pull")); n != 1 {
		t.Errorf("%d pulls; want 1", n)
	}
}

// A pull with credentials tries each in turn until one works, as the
// kubelet does; a registry on the loopback is reached without TLS checks.
func TestPullTriesEachCredential(t *testing.T) {
	f := newFakePodman(t)
	var users []string
	f.handle("POST /images/pull", func(w http.ResponseWriter, r *http.Request) {
		b, _ := base64.URLEncoding.DecodeString(r.Header.Get("X-Registry-Auth"))
		var a libpod.RegistryAuth
		_ = json.Unmarshal(b, &a)
		users = append(users, a.Username)
		if a.Username != "good" {
			_, _ = w.Write([]byte(`{"error":"reading manifest: unauthorized: authentication required"}` + "\n"))
			return
		}
		_, _ = w.Write([]byte(`{"images":["sha1"],"id":"sha1"}` + "\n"))
	})
	b := f.backend()
	ctx := context.Background()
	creds := []runtime.Credential{{Server: "127.0.0.1:5000", Username: "bad", Password: "x"}, {Server: "127.0.0.1:5000", Username: "good", Password: "y"}}
	if id, err := b.EnsureImage(ctx, "127.0.0.1:5000/a/b:1", runtime.PullAlways, creds); err != nil || id != "sha1" {
		t.Fatalf("EnsureImage = %q, %v", id, err)
	}
	if !reflect.DeepEqual(users, []string{"bad", "good"}) {
		t.Errorf("tried %v; want bad, then good", users)
	}
	_, err := b.EnsureImage(ctx, "127.0.0.1:5000/a/b:1", runtime.PullAlways, creds[:1])
	if !errors.Is(err, runtime.ErrImageNotFound) || !strings.Contains(err.Error(), "unauthorized") || strings.Contains(err.Error(), "image not found") {
		t.Errorf("failed pull: %v; want podman's words, as an ErrImageNotFound", err)
	}
	for _, p := range f.sent("POST /images/pull") {
		if p.Query.Get("tlsVerify") != "false" {
			t.Errorf("pull of a loopback registry without tlsVerify=false: %v", p.Query)
		}
	}
}

func TestLoopbackRegistry(t *testing.T) {
	for image, want := range map[string]bool{
		"localhost:5000/pause:testing": true, "127.0.0.1:5000/a/b": true, "127.0.0.2/a": true, "[::1]:5000/a": true,
		"localhost/runlet/busybox": true, "busybox": false, "quay.io/a/b": false, "10.0.0.1:5000/a": false, "Bad Name": false,
	} {
		if got := loopbackRegistry(image); got != want {
			t.Errorf("loopbackRegistry(%q) = %v; want %v", image, got, want)
		}
	}
}

// A pod on the host's network has the host's name too, as on the kubelet.
func TestHostNetworkSandboxSharesUTS(t *testing.T) {
	spec := podSpec(runtime.SandboxConfig{PodUID: "u", Namespace: "ns", Name: "p", HostNetwork: true})
	if spec.NetNS == nil || spec.NetNS.NSMode != "host" || spec.UtsNS == nil || spec.UtsNS.NSMode != "host" || spec.Hostname != "" {
		t.Errorf("netns %+v utsns %+v hostname %q; want host, host and none", spec.NetNS, spec.UtsNS, spec.Hostname)
	}
	if spec := podSpec(runtime.SandboxConfig{PodUID: "u", Namespace: "ns", Name: "p", Hostname: "p"}); spec.UtsNS != nil || spec.NetNS != nil {
		t.Errorf("a pod network sandbox got netns %+v utsns %+v", spec.NetNS, spec.UtsNS)
	}
}

// A pod with a user namespace of its own is a pod with ID mappings, a
// private user namespace (podman's infra default would win otherwise) and
// a network namespace its infra makes and shares, at a path the labels
// keep; its containers join that one, not the path.
func TestUserNamespaceSandboxSpec(t *testing.T) {
	one := []runtime.IDMapping{{ContainerID: 0, HostID: 131072, Length: 65536}}
	cfg := runtime.SandboxConfig{PodUID: "u", Namespace: "ns", Name: "p", NetNS: "/run/netns/runlet-1",
		UserNS: &runtime.UserNamespace{UIDs: one, GIDs: one}}
	spec := podSpec(cfg)
	want := []libpod.IDMap{{ContainerID: 0, HostID: 131072, Size: 65536}}
	if m := spec.IDMappings; m == nil || !reflect.DeepEqual(m.UIDMap, want) || !reflect.DeepEqual(m.GIDMap, want) || m.HostUIDMapping {
		t.Errorf("idmappings %+v; want %v for users and groups", spec.IDMappings, want)
	}
	if spec.UserNS == nil || spec.UserNS.NSMode != "private" || spec.NetNS == nil || spec.NetNS.NSMode != "none" ||
		!slices.Contains(spec.SharedNamespaces, "net") {
		t.Errorf("userns %+v netns %+v shared %v; want private, the infra's own, shared", spec.UserNS, spec.NetNS, spec.SharedNamespaces)
	}
	if spec.Labels[labelUserNS] != "true" || spec.Labels[labelNetNS] != cfg.NetNS {
		t.Errorf("labels %v; want the user namespace marked and the netns path kept", spec.Labels)
	}
	b := &Backend{}
	if c := b.containerSpec("pod", spec.Labels, runtime.ContainerConfig{Name: "c", Image: "i"}); c.NetNS != nil {
		t.Errorf("container netns %+v; want the pod's shared one", c.NetNS)
	}
	// Its infra runs before the network is attached: only created, the
	// sandbox is not ready yet, unlike a pod in the core's namespace.
	if sandboxReady("created", spec.Labels) || !sandboxReady("running", spec.Labels) {
		t.Error("a user namespace pod's sandbox: ready while its infra is only created, or not while it runs")
	}
	if !sandboxReady("created", map[string]string{labelNetNS: cfg.NetNS}) {
		t.Error("a pod in the core's namespace is not ready with its infra created")
	}
}

// TestUpdateContainerBody pins what podman update is sent: every limit
// stated, so that one the pod no longer asks for is lifted (-1).
func TestUpdateContainerBody(t *testing.T) {
	f := newFakePodman(t)
	f.json("POST /containers/c1/update", 201, map[string]any{})
	b := f.backend()
	b.cg = cgroups.Host{SwapLimit: true}
	if err := b.UpdateContainerResources(context.Background(), "c1", runtime.Resources{CPUShares: 128}); err != nil {
		t.Fatal(err)
	}
	want := `{"memory":{"limit":-1,"swap":-1},"cpu":{"shares":128,"quota":-1,"period":100000}}`
	if got := strings.TrimSpace(string(f.sent("POST /containers/c1/update")[0].Body)); got != want {
		t.Errorf("update body\n got %s\nwant %s", got, want)
	}
}

// A sandbox on the core's pod network: podman pods cannot join a namespace
// by path, so the pod shares none and each container joins it; the host
// ports are the network's (portmap), and the namespace and addresses stay
// with the pod's labels for a restarted runlet.
func TestSandboxInACoreNetworkNamespace(t *testing.T) {
	cfg := runtime.SandboxConfig{PodUID: "u", Namespace: "ns", Name: "p", Hostname: "p",
		NetNS: "/run/netns/runlet-1", IPs: []string{"10.244.1.5"}, Ports: []runtime.PortMapping{{HostPort: 8080, ContainerPort: 80}}}
	spec := podSpec(cfg)
	if spec.NetNS == nil || spec.NetNS.NSMode != "none" || slices.Contains(spec.SharedNamespaces, "net") || len(spec.PortMappings) != 0 {
		t.Errorf("pod spec: netns %+v, shared %v, ports %v; want its own empty netns, net not shared, no podman ports",
			spec.NetNS, spec.SharedNamespaces, spec.PortMappings)
	}
	if spec.Labels[labelNetNS] != cfg.NetNS || spec.Labels[labelIPs] != "10.244.1.5" {
		t.Errorf("labels %v lack the namespace and the address", spec.Labels)
	}
	b := &Backend{}
	ctr := b.containerSpec("pod-1", spec.Labels, runtime.ContainerConfig{Name: "c", Image: "img"})
	if ctr.NetNS == nil || ctr.NetNS.NSMode != "path" || ctr.NetNS.Value != cfg.NetNS {
		t.Errorf("container netns %+v; want path %s", ctr.NetNS, cfg.NetNS)
	}
	if ips := sandboxIPs(spec.Labels, libpod.InspectContainer{}); len(ips) != 1 || ips[0] != "10.244.1.5" {
		t.Errorf("sandbox IPs %v; want the network's", ips)
	}
	if ctr := b.containerSpec("pod-1", podSpec(runtime.SandboxConfig{PodUID: "u", Namespace: "ns", Name: "p"}).Labels,
		runtime.ContainerConfig{Name: "c", Image: "img"}); ctr.NetNS != nil {
		t.Errorf("a container of a podman-network pod got netns %+v", ctr.NetNS)
	}
}
