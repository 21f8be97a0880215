package kuberuntime

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/record"
)

func i64(v int64) *int64 { return &v }
func yes() *bool         { b := true; return &b }
func no() *bool          { b := false; return &b }

// TestEffectiveSecurityContext: the container's fields win over the pod's,
// field by field, as the kubelet merges them.
func TestEffectiveSecurityContext(t *testing.T) {
	pod := newPod(v1.RestartPolicyNever, "c")
	pod.Spec.SecurityContext = &v1.PodSecurityContext{RunAsUser: i64(1000), RunAsGroup: i64(2000),
		FSGroup: i64(3000), SupplementalGroups: []int64{4000, 5000}}
	pod.Spec.Containers[0].SecurityContext = &v1.SecurityContext{RunAsUser: i64(1001)}
	sec, err := containerSecurity(pod, &pod.Spec.Containers[0], "", NodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *sec.RunAsUser != 1001 || *sec.RunAsGroup != 2000 {
		t.Errorf("user %d:%d; want the container's 1001 and the pod's group 2000", *sec.RunAsUser, *sec.RunAsGroup)
	}
	if !reflect.DeepEqual(sec.SupplementalGroups, []int64{3000, 4000, 5000}) {
		t.Errorf("groups %v; want fsGroup first, then supplementalGroups", sec.SupplementalGroups)
	}
	if sec.Seccomp.Type != runtime.SeccompUnconfined || sec.NoNewPrivs || sec.Privileged || sec.ReadOnlyRootfs || sec.MaskedPaths != nil {
		t.Errorf("defaults = %+v; want Unconfined seccomp (the kubelet's default), nothing else", sec)
	}
}

func TestCapabilitiesAndPrivileges(t *testing.T) {
	pod := newPod(v1.RestartPolicyNever, "c")
	c := &pod.Spec.Containers[0]
	c.SecurityContext = &v1.SecurityContext{
		Capabilities:             &v1.Capabilities{Add: []v1.Capability{"NET_ADMIN", "cap_sys_time"}, Drop: []v1.Capability{"ALL"}},
		AllowPrivilegeEscalation: no(), ReadOnlyRootFilesystem: yes(),
	}
	sec, _ := containerSecurity(pod, c, "", NodeOptions{})
	if !reflect.DeepEqual(sec.CapAdd, []string{"CAP_NET_ADMIN", "CAP_SYS_TIME"}) || !reflect.DeepEqual(sec.CapDrop, []string{"ALL"}) {
		t.Errorf("caps +%v -%v", sec.CapAdd, sec.CapDrop)
	}
	if !sec.NoNewPrivs || !sec.ReadOnlyRootfs {
		t.Errorf("no_new_privs %v read-only %v; want both", sec.NoNewPrivs, sec.ReadOnlyRootfs)
	}
	c.SecurityContext = &v1.SecurityContext{AllowPrivilegeEscalation: yes()}
	if sec, _ := containerSecurity(pod, c, "", NodeOptions{}); sec.NoNewPrivs {
		t.Error("allowPrivilegeEscalation true set no_new_privs")
	}
	c.SecurityContext = &v1.SecurityContext{Privileged: yes(), Capabilities: &v1.Capabilities{Drop: []v1.Capability{"ALL"}}}
	if sec, _ := containerSecurity(pod, c, "", NodeOptions{}); !sec.Privileged || sec.CapDrop != nil {
		t.Errorf("privileged = %+v; want privileged with every capability", sec)
	}
	um := v1.UnmaskedProcMount
	c.SecurityContext = &v1.SecurityContext{ProcMount: &um}
	if sec, _ := containerSecurity(pod, c, "", NodeOptions{}); sec.MaskedPaths == nil || len(sec.MaskedPaths) != 0 || sec.ReadonlyPaths == nil {
		t.Errorf("Unmasked = %+v; want empty (not nil) masked and read-only paths", sec)
	}
}

// TestRunAsNonRoot follows verifyRunAsNonRoot case by case, messages included.
func TestRunAsNonRoot(t *testing.T) {
	cases := []struct {
		name      string
		sc        *v1.SecurityContext
		imageUser string
		wantErr   string // "" = allowed
		wantUser  string
	}{
		{"root image", &v1.SecurityContext{RunAsNonRoot: yes()}, "", "container has runAsNonRoot and image will run as root (pod: \"p_ns(uid-1)\", container: c)", ""},
		{"explicit root", &v1.SecurityContext{RunAsNonRoot: yes(), RunAsUser: i64(0)}, "", "container's runAsUser breaks non-root policy (pod: \"p_ns(uid-1)\", container: c)", ""},
		{"explicit non-root", &v1.SecurityContext{RunAsNonRoot: yes(), RunAsUser: i64(1000)}, "", "", "1000"},
		{"numeric image user", &v1.SecurityContext{RunAsNonRoot: yes()}, "1234", "", ""},
		{"numeric image user and group", &v1.SecurityContext{RunAsNonRoot: yes()}, "1234:50", "", ""},
		{"image user 0 with group", &v1.SecurityContext{RunAsNonRoot: yes()}, "0:50", "image will run as root", ""},
		{"named image user", &v1.SecurityContext{RunAsNonRoot: yes()}, "nobody", "container has runAsNonRoot and image has non-numeric user (nobody), cannot verify user is non-root (pod: \"p_ns(uid-1)\", container: c)", ""},
		{"invalid uid", &v1.SecurityContext{RunAsNonRoot: yes()}, "4294967296", "image has an invalid user id (4294967296)", ""},
		{"runAsNonRoot false", &v1.SecurityContext{RunAsNonRoot: no()}, "", "", ""},
		{"group alone on a named user", &v1.SecurityContext{RunAsGroup: i64(50)}, "nobody", "", "nobody:50"},
		{"group alone on a numeric user", &v1.SecurityContext{RunAsGroup: i64(50)}, "1234:7", "", "1234:50"},
		{"negative uid", &v1.SecurityContext{RunAsUser: i64(-1)}, "", "invalid runAsUser -1: must be between 0 and 2147483647", ""},
		{"uid too large", &v1.SecurityContext{RunAsGroup: i64(1 << 32)}, "", "invalid runAsGroup 4294967296", ""},
	}
	for _, tc := range cases {
		pod := newPod(v1.RestartPolicyNever, "c")
		c := &pod.Spec.Containers[0]
		c.SecurityContext = tc.sc
		sec, err := containerSecurity(pod, c, tc.imageUser, NodeOptions{})
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v; want %q", tc.name, err, tc.wantErr)
		case err == nil && tc.wantUser != "" && userSpecOf(sec) != tc.wantUser:
			t.Errorf("%s: user %q; want %q", tc.name, userSpecOf(sec), tc.wantUser)
		}
	}
}

func userSpecOf(s runtime.SecurityConfig) string {
	u := s.Username
	if s.RunAsUser != nil {
		u = fmt.Sprint(*s.RunAsUser)
	}
	if s.RunAsGroup != nil {
		u += fmt.Sprintf(":%d", *s.RunAsGroup)
	}
	return u
}

// TestRunAsNonRootRefusedBeforeCreate: the image's user is read, the
// container is not created, and the pod waits with the kubelet's reason and
// a Failed event.
func TestRunAsNonRootRefusedBeforeCreate(t *testing.T) {
	e := newEnv(t)
	rec := record.NewFakeRecorder(100)
	e.m.rec = rec
	pod := newPod(v1.RestartPolicyNever, "c")
	pod.Spec.SecurityContext = &v1.PodSecurityContext{RunAsNonRoot: yes()}
	if _, err := e.sync(pod); err == nil {
		t.Fatal("a root image with runAsNonRoot started")
	}
	if n := len(e.f.Containers()); n != 0 || e.f.Calls("ImageUser") != 1 {
		t.Errorf("%d containers, %d image-user reads; want none created after one read", n, e.f.Calls("ImageUser"))
	}
	w := e.m.Waiting("uid-1")["c"]
	if w.Reason != "CreateContainerConfigError" || !strings.Contains(w.Message, "image will run as root") {
		t.Errorf("waiting = %+v", w)
	}
	if !hasEvent(rec, "Warning Failed Error: container has runAsNonRoot") {
		t.Error("no Failed event naming runAsNonRoot")
	}
	e.f.SetImageUser("img:1", "1234")
	if _, err := e.sync(pod); err != nil {
		t.Fatalf("non-root image: %v", err)
	}
	if cfg, _ := e.f.Config(e.latest(pod, "c").ID); cfg.Security.RunAsUser != nil {
		t.Errorf("user %v; want the image's own (nothing set)", *cfg.Security.RunAsUser)
	}
}

func TestSeccompProfiles(t *testing.T) {
	node := NodeOptions{SeccompRoot: "/var/lib/runlet/seccomp"}
	local := func(p string) *v1.SeccompProfile {
		return &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost, LocalhostProfile: &p}
	}
	cases := []struct {
		name      string
		pod, ctr  *v1.SeccompProfile
		def       bool
		want      runtime.SeccompProfile
		wantError bool
	}{
		{name: "none: Unconfined", want: runtime.SeccompProfile{Type: runtime.SeccompUnconfined}},
		{name: "none with --seccomp-default", def: true, want: runtime.SeccompProfile{Type: runtime.SeccompRuntimeDefault}},
		{name: "pod RuntimeDefault", pod: &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault}, want: runtime.SeccompProfile{Type: runtime.SeccompRuntimeDefault}},
		{name: "container wins", pod: &v1.SeccompProfile{Type: v1.SeccompProfileTypeRuntimeDefault},
			ctr: &v1.SeccompProfile{Type: v1.SeccompProfileTypeUnconfined}, want: runtime.SeccompProfile{Type: runtime.SeccompUnconfined}},
		{name: "Localhost under the root", ctr: local("profiles/audit.json"),
			want: runtime.SeccompProfile{Type: runtime.SeccompLocalhost, Path: "/var/lib/runlet/seccomp/profiles/audit.json"}},
		{name: "Localhost escaping the root", ctr: local("../../etc/x.json"), wantError: true},
		{name: "Localhost absolute", ctr: local("/etc/x.json"), wantError: true},
		{name: "Localhost without a name", ctr: &v1.SeccompProfile{Type: v1.SeccompProfileTypeLocalhost}, wantError: true},
	}
	for _, tc := range cases {
		pod := newPod(v1.RestartPolicyNever, "c")
		if tc.pod != nil {
			pod.Spec.SecurityContext = &v1.PodSecurityContext{SeccompProfile: tc.pod}
		}
		if tc.ctr != nil {
			pod.Spec.Containers[0].SecurityContext = &v1.SecurityContext{SeccompProfile: tc.ctr}
		}
		n := node
		n.SeccompDefault = tc.def
		got, err := seccompProfile(pod, &pod.Spec.Containers[0], n)
		if (err != nil) != tc.wantError || err == nil && got != tc.want {
			t.Errorf("%s: %+v, %v; want %+v (error %v)", tc.name, got, err, tc.want, tc.wantError)
		}
	}
}

func TestSandboxSecurity(t *testing.T) {
	pod := newPod(v1.RestartPolicyNever, "c")
	pod.Spec.HostPID, pod.Spec.HostIPC, pod.Spec.ShareProcessNamespace = true, true, yes()
	pod.Spec.SecurityContext = &v1.PodSecurityContext{Sysctls: []v1.Sysctl{
		{Name: "kernel/shm_rmid_forced", Value: "1"}, {Name: "net.ipv4.conf.eth0/100.rp_filter", Value: "0"}}}
	var cfg runtime.SandboxConfig
	sandboxSecurity(pod, &cfg)
	want := map[string]string{"kernel.shm_rmid_forced": "1", "net.ipv4.conf.eth0/100.rp_filter": "0"}
	if !cfg.HostPID || !cfg.HostIPC || !cfg.ShareProcessNamespace || !reflect.DeepEqual(cfg.Sysctls, want) {
		t.Errorf("sandbox = %+v; want host PID/IPC, shared PID, sysctls %v", cfg, want)
	}
	sec, _ := containerSecurity(pod, &pod.Spec.Containers[0], "", NodeOptions{})
	if !sec.HostPID || !sec.HostIPC {
		t.Errorf("container namespaces = %+v", sec)
	}
}

// TestHostUsersFalseRefused: without user namespaces the sandbox is not
// created, with the kubelet's FailedCreatePodSandBox event.
func TestHostUsersFalseRefused(t *testing.T) {
	e := newEnv(t)
	rec := record.NewFakeRecorder(10)
	e.m.rec = rec
	pod := newPod(v1.RestartPolicyNever, "c")
	pod.Spec.HostUsers = no()
	started, failed := usernsCounts()
	if _, err := e.sync(pod); err == nil || len(e.f.Sandboxes()) != 0 {
		t.Fatalf("sync = %v with %d sandboxes; want an error and none", err, len(e.f.Sandboxes()))
	}
	if s, f := usernsCounts(); s != started+1 || f != failed+1 {
		t.Errorf("started and failed user namespaced pods went from %v, %v to %v, %v; want one more of each", started, failed, s, f)
	}
	if !hasEvent(rec, "Warning FailedCreatePodSandBox Failed to create pod sandbox: can't set `spec.hostUsers: false`") {
		t.Error("no FailedCreatePodSandBox event naming hostUsers")
	}
}

// TestUnhonouredFieldsWarned: fields the host cannot apply are named in
// one Warning event when the sandbox is created.
func TestUnhonouredFieldsWarned(t *testing.T) {
	e := newEnv(t)
	rec := record.NewFakeRecorder(10)
	e.m.rec = rec
	pod := newPod(v1.RestartPolicyNever, "c")
	pod.Spec.SecurityContext = &v1.PodSecurityContext{SELinuxOptions: &v1.SELinuxOptions{Level: "s0:c1"}}
	// An ephemeral-storage limit is honoured (by eviction): not named.
	pod.Spec.Containers[0].Resources.Limits = v1.ResourceList{v1.ResourceEphemeralStorage: resource.MustParse("1Gi")}
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	if !hasEvent(rec, "Warning UnsupportedField this node cannot honour spec.securityContext.seLinuxOptions (SELinux is not enabled on this host): the pod runs without them") {
		t.Error("no UnsupportedField event naming only seLinuxOptions")
	}
	if cfg, _ := e.f.SandboxConfig(e.f.Sandboxes()[0].ID); cfg.Resources.CPUShares != minShares {
		t.Errorf("pod cgroup %+v; want BestEffort's 2 shares", cfg.Resources)
	}
}

// hasEvent drains the recorded events and reports one starting with prefix.
func hasEvent(rec *record.FakeRecorder, prefix string) bool {
	for {
		select {
		case ev := <-rec.Events:
			if strings.HasPrefix(ev, prefix) {
				return true
			}
		default:
			return false
		}
	}
}
