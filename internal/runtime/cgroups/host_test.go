package cgroups

import (
	"path/filepath"
	"testing"
)

func TestDetect(t *testing.T) {
	v1, v2 := t.TempDir(), t.TempDir()
	mkdir(t, filepath.Join(v1, "memory"))
	writeFile(t, filepath.Join(v1, "memory", "memory.memsw.limit_in_bytes"), "max")
	mkdir(t, filepath.Join(v2, "runlet.slice"))
	writeFile(t, filepath.Join(v2, "runlet.slice", "memory.swap.max"), "max")
	const self = "0::/runlet.slice\n"
	for _, tc := range []struct {
		name       string
		root, self string
		v2         bool
		want       Host
	}{
		{"v1 with swap accounting", v1, "", false, Host{SwapLimit: true}},
		{"v1 without", t.TempDir(), "", false, Host{}},
		{"v2: runlet's own cgroup has memory.swap.max", v2, self, true, Host{V2: true, SwapLimit: true}},
		{"v2 in the root cgroup, which has no memory files", v2, "0::/\n", true, Host{V2: true}},
		{"v2 without /proc/self/cgroup", v2, "", true, Host{V2: true}},
	} {
		if got := detect(tc.root, tc.self, tc.v2); got != tc.want {
			t.Errorf("%s: %+v; want %+v", tc.name, got, tc.want)
		}
	}
}

func TestHostView(t *testing.T) {
	const (
		v1Host = "30 25 0:26 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n" +
			"31 30 0:27 / /sys/fs/cgroup/cpu rw,nosuid - cgroup cgroup rw,cpu\n" +
			"32 30 0:28 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n"
		// runc on v1 without a cgroup namespace binds the container's own cgroup.
		v1Container = "31 30 0:27 /kubepods/pod1/ctr /sys/fs/cgroup/cpu ro,nosuid - cgroup cgroup rw,cpu\n"
		v2          = "40 25 0:30 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
	)
	for _, tc := range []struct {
		name, mountinfo, self, init string
		want                        bool
	}{
		{"v1 host", v1Host, "cgroup:[1]", "cgroup:[1]", true},
		{"v1 container", v1Host + v1Container, "cgroup:[1]", "cgroup:[1]", false},
		{"v2 host, init's namespace unreadable", v2, "cgroup:[1]", "", true},
		{"v2 cgroup namespace of its own", v2, "cgroup:[2]", "cgroup:[1]", false},
		{"no cgroup mounted", "30 25 0:26 / /tmp rw - tmpfs tmpfs rw\n", "", "", false},
	} {
		if got := hostView(tc.mountinfo, tc.self, tc.init); got != tc.want {
			t.Errorf("%s: hostView = %v, want %v", tc.name, got, tc.want)
		}
	}
}
