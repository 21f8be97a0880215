package cgroups

import (
	"os"
	"path/filepath"
	"strings"
)

// Root is where the host's cgroup hierarchies are mounted.
const Root = "/sys/fs/cgroup"

// Host is what the host's cgroups offer beyond a runtime's defaults.
type Host struct {
	// V2: the unified hierarchy; else cgroup v1 (hybrid included).
	V2 bool
	// SwapLimit: the memory+swap limit can be set (v1 memory.memsw.*, v2
	// memory.swap.max), so that a memory limit can mean no swap, as on the
	// kubelet. Without swap accounting the kernel has no such file.
	SwapLimit bool
}

// Detect looks at the local cgroup tree, so it speaks for a backend whose
// containers run on this host. v2 is the hierarchy as the backend reports
// it (podman's info), or Unified for a backend that runs its containers
// itself.
func Detect(v2 bool) Host {
	self, _ := os.ReadFile("/proc/self/cgroup")
	return detect(Root, string(self), v2)
}

// Unified reports whether the local hierarchy is cgroup v2: only its root
// has cgroup.controllers.
func Unified() bool {
	_, err := os.Stat(filepath.Join(Root, "cgroup.controllers"))
	return err == nil
}

// detect is Detect below root, with self the caller's /proc/self/cgroup.
func detect(root, self string, v2 bool) Host {
	if !v2 {
		return Host{SwapLimit: exists(filepath.Join(root, "memory", "memory.memsw.limit_in_bytes"))}
	}
	return Host{V2: true, SwapLimit: ownV2File(root, self, "memory.swap.max")}
}

// ownV2File reports whether the caller's own v2 cgroup has the file: the
// root cgroup has no memory.* files, so the root's would say nothing.
func ownV2File(root, self, name string) bool {
	for _, line := range strings.Split(self, "\n") {
		if path, ok := strings.CutPrefix(line, "0::"); ok {
			return exists(filepath.Join(root, path, name))
		}
	}
	return false
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
