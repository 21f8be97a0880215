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
