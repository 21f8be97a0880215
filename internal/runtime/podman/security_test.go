package podman

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/cgroups"
	"github.com/runlet/runlet/internal/runtime/conmon"
	"github.com/runlet/runlet/internal/runtime/hostproc"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
	"github.com/runlet/runlet/internal/runtime/podman/podmanservice"
)

func ptr[T any](v T) *T { return &v }

func TestSecuritySpec(t *testing.T) {
	cases := []struct {
		name string
		in   runtime.SecurityConfig
		want libpod.SecuritySpec
	}{
		{"defaults keep the image's user and podman's profile", runtime.SecurityConfig{}, libpod.SecuritySpec{}},
		{"user, group and supplementary groups",
			runtime.SecurityConfig{RunAsUser: ptr(int64(1000)), RunAsGroup: ptr(int64(2000)), SupplementalGroups: []int64{3000, 4000}},
			libpod.SecuritySpec{User: "1000:2000", Groups: []string{"3000", "4000"}}},
		{"user alone", runtime.SecurityConfig{RunAsUser: ptr(int64(0))}, libpod.SecuritySpec{User: "0"}},
		{"a group on the image's named user", runtime.SecurityConfig{Username: "nobody", RunAsGroup: ptr(int64(50))}, libpod.SecuritySpec{User: "nobody:50"}},
		{"a group with no user known runs as root", runtime.SecurityConfig{RunAsGroup: ptr(int64(50))}, libpod.SecuritySpec{User: "0:50"}},
		{"capabilities, no_new_privs, read-only rootfs",
			runtime.SecurityConfig{CapAdd: []string{"CAP_NET_ADMIN"}, CapDrop: []string{"ALL"}, NoNewPrivs: true, ReadOnlyRootfs: true},
			libpod.SecuritySpec{CapAdd: []string{"CAP_NET_ADMIN"}, CapDrop: []string{"ALL"}, NoNewPrivileges: true, ReadOnlyFilesystem: true}},
		{"privileged has every capability",
			runtime.SecurityConfig{Privileged: true, CapDrop: []string{"CAP_CHOWN"}},
			libpod.SecuritySpec{Privileged: true}},
		{"seccomp unconfined", runtime.SecurityConfig{Seccomp: runtime.SeccompProfile{Type: runtime.SeccompUnconfined}},
			libpod.SecuritySpec{SeccompProfilePath: "unconfined"}},
		{"seccomp localhost", runtime.SecurityConfig{Seccomp: runtime.SeccompProfile{Type: runtime.SeccompLocalhost, Path: "/var/lib/runlet/seccomp/p.json"}},
			libpod.SecuritySpec{SeccompProfilePath: "/var/lib/runlet/seccomp/p.json"}},
		{"procMount Unmasked", runtime.SecurityConfig{MaskedPaths: []string{}, ReadonlyPaths: []string{}},
			libpod.SecuritySpec{Unmask: []string{"ALL"}}},
		{"more masked paths", runtime.SecurityConfig{MaskedPaths: []string{"/proc/x"}}, libpod.SecuritySpec{Mask: []string{"/proc/x"}}},
		{"host namespaces", runtime.SecurityConfig{HostPID: true, HostIPC: true},
			libpod.SecuritySpec{PidNS: &libpod.Namespace{NSMode: "host"}, IpcNS: &libpod.Namespace{NSMode: "host"}}},
		{"SELinux and AppArmor pass through", runtime.SecurityConfig{SELinuxOptions: []string{"type:spc_t"}, AppArmorProfile: "unconfined"},
			libpod.SecuritySpec{SelinuxOpts: []string{"type:spc_t"}, ApparmorProfile: "unconfined"}},
	}
	for _, tc := range cases {
		if got := securitySpec(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

// TestSpecJSONNames pins the specgen names podman 4.3 reads (checked
// against the real service by the e2e tests): a misspelt key is silently
// ignored by podman.
func TestSpecJSONNames(t *testing.T) {
	b := &Backend{cg: cgroups.Host{SwapLimit: true}, limits: podmanservice.Limits{CapSysResource: true}}
	spec := b.containerSpec("pod1", podLabels, runtime.ContainerConfig{
		Name: "c", Image: "img",
		Resources: runtime.Resources{CPUMillis: 1, CPUShares: 2, MemoryBytes: 1 << 20, PidsLimit: 5, OOMScoreAdj: ptr(-997)},
		Security: runtime.SecurityConfig{RunAsUser: ptr(int64(1)), SupplementalGroups: []int64{2}, CapAdd: []string{"CAP_A"},
			CapDrop: []string{"CAP_B"}, NoNewPrivs: true, ReadOnlyRootfs: true, MaskedPaths: []string{}, ReadonlyPaths: []string{},
			Seccomp: runtime.SeccompProfile{Type: runtime.SeccompUnconfined}, HostPID: true, HostIPC: true,
			SELinuxOptions: []string{"type:t"}, AppArmorProfile: "p"},
	})
	raw, _ := json.Marshal(spec)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	for _, k := range []string{"user", "groups", "cap_add", "cap_drop", "no_new_privileges", "read_only_filesystem",
		"seccomp_profile_path", "unmask", "pidns", "ipcns", "selinux_opts", "apparmor_profile", "oom_score_adj", "resource_limits"} {
		if _, ok := m[k]; !ok {
			t.Errorf("create spec lacks %q: %s", k, raw)
		}
	}
	rl, _ := json.Marshal(spec.ResourceLimits)
	for _, want := range []string{`"pids":{"limit":5}`, `"shares":2`, `"quota":1000`, `"period":100000`, `"limit":1048576,"swap":1048576`} {
		if !strings.Contains(string(rl), want) {
			t.Errorf("resource_limits %s lacks %s", rl, want)
		}
	}
	var ps libpod.PodSpec
	b.applyPodSecurity(&ps, runtime.SandboxConfig{Sysctls: map[string]string{"kernel.shm_rmid_forced": "1"}, Resources: runtime.Resources{PidsLimit: 9}})
	raw, _ = json.Marshal(ps)
	for _, want := range []string{`"sysctl":{"kernel.shm_rmid_forced":"1"}`, `"resource_limits":{"pids":{"limit":9}}`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("pod spec %s lacks %s", raw, want)
		}
	}
}

func TestOOMScoreAdjClamp(t *testing.T) {
	without := &Backend{limits: podmanservice.Limits{OOMScoreAdj: 0}}
	if got := *without.oomScoreAdj(ptr(-997)); got != 0 {
		t.Errorf("without CAP_SYS_RESOURCE: %d; want the service's 0", got)
	}
	if got := *without.oomScoreAdj(ptr(1000)); got != 1000 {
		t.Errorf("raising: %d; want 1000", got)
	}
	with := &Backend{limits: podmanservice.Limits{CapSysResource: true}}
	if got := *with.oomScoreAdj(ptr(-997)); got != -997 {
		t.Errorf("with CAP_SYS_RESOURCE: %d; want -997", got)
	}
	if without.oomScoreAdj(nil) != nil {
		t.Error("nil became a value")
	}
}

func TestPodSecurityNamespaces(t *testing.T) {
	b := &Backend{}
	for _, tc := range []struct {
		cfg  runtime.SandboxConfig
		want []string
	}{
		{runtime.SandboxConfig{}, []string{"net", "ipc", "uts"}},
		{runtime.SandboxConfig{HostIPC: true}, []string{"net", "uts"}},
		{runtime.SandboxConfig{ShareProcessNamespace: true}, []string{"net", "ipc", "uts", "pid"}},
		{runtime.SandboxConfig{HostPID: true, ShareProcessNamespace: true}, []string{"net", "ipc", "uts"}},
	} {
		spec := podSpec(tc.cfg)
		b.applyPodSecurity(&spec, tc.cfg)
		if !reflect.DeepEqual(spec.SharedNamespaces, tc.want) {
			t.Errorf("%+v: shared %v; want %v", tc.cfg, spec.SharedNamespaces, tc.want)
		}
	}
}

func TestImageUser(t *testing.T) {
	f := newFakePodman(t)
	f.json("GET /images/localhost/nonroot:1/json", 200, map[string]any{"Id": "i1", "Config": map[string]any{"User": "1234:50"}})
	f.json("GET /images/localhost/none:1/json", 404, map[string]any{"cause": "failed to find image", "message": "no such image"})
	b := f.backend()
	if u, err := b.ImageUser(context.Background(), "localhost/nonroot:1"); err != nil || u != "1234:50" {
		t.Errorf("ImageUser = %q, %v; want 1234:50", u, err)
	}
	if _, err := b.ImageUser(context.Background(), "localhost/none:1"); !errors.Is(err, runtime.ErrImageNotFound) {
		t.Errorf("missing image: %v; want ErrImageNotFound", err)
	}
}

// TestReadExitOOMFromCgroup: conmon missed the kill (hybrid cgroups), the
// container's memory cgroup counted it: the exit is an OOM kill, the bundle
// gets conmon's mark, and later listings keep saying so.
func TestReadExitOOMFromCgroup(t *testing.T) {
	root, exits, bundle := t.TempDir(), t.TempDir(), t.TempDir()
	id, infra := strings.Repeat("c", 64), strings.Repeat("f", 64)
	b := &Backend{details: map[string]ctrDetail{id: {staticDir: bundle}}}
	cg := filepath.Join(root, "memory/libpod_parent/pod1/libpod-"+id)
	if err := os.MkdirAll(cg, 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.WriteFile(filepath.Join(cg, "memory.oom_control"), []byte("oom_kill_disable 0\nunder_oom 0\noom_kill 0\n"), 0o644)
	b.ooms = hostproc.NewOOMRecorder(root, false)
	b.ooms.LearnSibling(id, infra, "/libpod_parent/pod1/libpod-"+infra)
	exit := filepath.Join(exits, id)
	_ = os.WriteFile(exit, []byte("137"), 0o644)
	if x := b.readExit(exit, id); x == nil || x.OOMKilled || x.ExitCode != 137 {
		t.Errorf("kill -9 = %+v; want 137, not OOM-killed", x)
	}
	_ = os.WriteFile(filepath.Join(cg, "memory.oom_control"), []byte("oom_kill_disable 0\nunder_oom 0\noom_kill 1\n"), 0o644)
	if x := b.readExit(exit, id); x == nil || !x.OOMKilled {
		t.Errorf("OOM kill = %+v; want OOM-killed", x)
	}
	if !conmon.OOMMarked(bundle) {
		t.Error("no oom mark in the bundle")
	}
	_ = os.RemoveAll(cg) // podman's clean-up
	c := runtime.Container{}
	lc := libpod.ListContainer{ID: id, State: "exited", StartedAt: 1, ExitedAt: 2, ExitCode: 137}
	b.details[id] = ctrDetail{key: detailKey(lc), staticDir: bundle}
	b.applyDetail(lc, &c)
	if !c.OOMKilled {
		t.Error("a listing after the clean-up lost the OOM kill")
	}
}
