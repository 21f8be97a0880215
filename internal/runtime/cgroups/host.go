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

// HostView reports whether this process sees the cgroup hierarchies as the
// host does: each mounted from its root, in the cgroup namespace of PID 1.
// A container sees a bind of its own cgroup, or a cgroup namespace of its
// own; a cgroup a local runtime makes by path is then elsewhere than the
// same path here.
func HostView() bool {
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	self, _ := os.Readlink("/proc/self/ns/cgroup")
	init, _ := os.Readlink("/proc/1/ns/cgroup")
	return hostView(string(mounts), self, init)
}

// hostView is HostView over a mountinfo and two cgroup namespace links
// (empty where unreadable, which says nothing).
func hostView(mountinfo, selfNS, initNS string) bool {
	if selfNS != "" && initNS != "" && selfNS != initNS {
		return false
	}
	seen := false
	for _, line := range strings.Split(mountinfo, "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		f, fs := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(fs) == 0 || (fs[0] != "cgroup" && fs[0] != "cgroup2") {
			continue
		}
		if !strings.HasPrefix(f[4], Root) {
			continue
		}
		if f[3] != "/" {
			return false
		}
		seen = true
	}
	return seen
}
