package ocispec

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/cgroups"
	"github.com/runlet/runlet/internal/runtime/podman"
)

// TestSameAsPodman builds the same pod with both backends' translations,
// on the host podman.CreateSpecs assumes (cgroup v1 with swap accounting,
// nofile and nproc hard limits of 1<<20, no CAP_SYS_RESOURCE), and checks
// that what podman is asked for is what runc gets.
func TestSameAsPodman(t *testing.T) {
	sb := runtime.SandboxConfig{PodUID: "u1", Namespace: "ns", Name: "pod", Hostname: "pod", NetNS: "/run/netns/cni-1"}
	for _, ctr := range []runtime.ContainerConfig{
		{Name: "plain", Command: []string{"/bin/app"}},
		{Name: "limited", Command: []string{"/bin/app"},
			Resources: runtime.Resources{CPUMillis: 250, CPUShares: 256, MemoryBytes: 64 << 20, PidsLimit: 20, OOMScoreAdj: ptr(-997)}},
		{Name: "tiny", Command: []string{"/bin/app"}, Resources: runtime.Resources{CPUMillis: 1, OOMScoreAdj: ptr(1000)}},
		{Name: "mounts", Command: []string{"/bin/app"}, Mounts: []runtime.Mount{
			{HostPath: "/a", ContainerPath: "/a", ReadOnly: true},
			{HostPath: "/b", ContainerPath: "/b", Propagation: "HostToContainer"},
			{HostPath: "/c", ContainerPath: "/c", Propagation: "Bidirectional"},
		}},
		{Name: "secure", Command: []string{"/bin/app"}, Security: runtime.SecurityConfig{RunAsUser: ptr(int64(1000)), RunAsGroup: ptr(int64(2000)),
			SupplementalGroups: []int64{3000}, NoNewPrivs: true, ReadOnlyRootfs: true}},
	} {
		_, want := podman.CreateSpecs(sb, ctr)
		in := base()
		in.Pod.Config, in.Container = sb, ctr
		in.Host = Host{Cgroups: cgroups.Host{SwapLimit: true}, NoFileHard: 1 << 20, NProcHard: 1 << 20}
		got := build(t, in)

		gotRes := *got.Linux.Resources
		gotRes.Devices = nil
		if g, w := jsonOf(t, nilIfEmpty(jsonOf(t, gotRes))), jsonOf(t, want.ResourceLimits); g != w {
			t.Errorf("%s: resources %s; podman gets %s", ctr.Name, g, w)
		}
		if g, w := deref(got.Process.OOMScoreAdj), deref(want.OOMScoreAdj); g != w {
			t.Errorf("%s: oom_score_adj %v; podman gets %v", ctr.Name, g, w)
		}
		for i, rl := range want.RLimits {
			if r := got.Process.Rlimits[i]; r.Type != "RLIMIT_"+strings.ToUpper(rl.Type) || r.Hard != rl.Hard || r.Soft != rl.Soft {
				t.Errorf("%s: rlimit %+v; podman gets %+v", ctr.Name, r, rl)
			}
		}
		u := got.Process.User
		if want.User != "" && fmt.Sprintf("%d:%d", u.UID, u.GID) != want.User {
			t.Errorf("%s: user %d:%d; podman gets %s", ctr.Name, u.UID, u.GID, want.User)
		}
		for _, g := range want.Groups {
			if !slices.Contains(u.AdditionalGids, uint32(mustAtoi(t, g))) {
				t.Errorf("%s: groups %v; podman gets %v too", ctr.Name, u.AdditionalGids, g)
			}
		}
		if got.Process.NoNewPrivileges != want.NoNewPrivileges || got.Root.Readonly != want.ReadOnlyFilesystem {
			t.Errorf("%s: no_new_privs %v, read-only %v; podman gets %v, %v", ctr.Name,
				got.Process.NoNewPrivileges, got.Root.Readonly, want.NoNewPrivileges, want.ReadOnlyFilesystem)
		}
		for _, m := range want.Mounts {
			g := mountAt(got.Mounts, m.Destination)
			if g == nil || g.Source != m.Source || !sameSet(g.Options, m.Options) {
				t.Errorf("%s: mount %+v; podman gets %+v", ctr.Name, g, m)
			}
		}
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	v, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// nilIfEmpty makes resources with nothing set compare equal to podman's
// absent resource_limits.
func nilIfEmpty(js string) json.RawMessage {
	if js == "{}" {
		return json.RawMessage("null")
	}
	return json.RawMessage(js)
}
