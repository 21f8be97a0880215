package ocispec

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/runlet/runlet/internal/runtime"
)

// shmSize is /dev/shm's size when the container has one of its own: the
// 64 MiB of Docker, containerd and podman.
const shmSize = "size=65536k"

// setMounts sets the file system the process sees: the defaults, the
// container's mounts over them, and what of /proc and /sys is hidden.
func setMounts(s *specs.Spec, in Input) error {
	sec := in.Container.Security
	own, err := volumeMounts(in.Container.Mounts, in.ImageRoots)
	if err != nil {
		return err
	}
	s.Mounts = append(withoutShadowed(defaultMounts(in.Pod, sec), own), own...)
	s.Linux.RootfsPropagation = rootfsPropagation(in.Container.Mounts)
	if !sec.Privileged {
		s.Linux.MaskedPaths = orDefault(sec.MaskedPaths, defaultMaskedPaths)
		s.Linux.ReadonlyPaths = orDefault(sec.ReadonlyPaths, defaultReadonlyPaths)
	}
	return nil
}

// defaultMounts are containerd's CRI defaults. /sys and the cgroup tree are
// read-only unless the container is privileged; /dev/shm is the pod's (its
// IPC namespace is too), the host's with HostIPC.
func defaultMounts(pod Pod, sec runtime.SecurityConfig) []specs.Mount {
	ro := "ro"
	if sec.Privileged {
		ro = "rw"
	}
	return []specs.Mount{
		{Destination: "/proc", Type: "proc", Source: "proc", Options: []string{"nosuid", "noexec", "nodev"}},
		{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
		{Destination: "/dev/pts", Type: "devpts", Source: "devpts", Options: []string{"nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"}},
		shmMount(pod, sec),
		{Destination: "/dev/mqueue", Type: "mqueue", Source: "mqueue", Options: []string{"nosuid", "noexec", "nodev"}},
		{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", ro}},
		{Destination: "/sys/fs/cgroup", Type: "cgroup", Source: "cgroup", Options: []string{"nosuid", "noexec", "nodev", "relatime", ro}},
	}
}

func shmMount(pod Pod, sec runtime.SecurityConfig) specs.Mount {
	src := pod.Shm
	if pod.Config.HostIPC || sec.HostIPC {
		src = "/dev/shm"
	}
	if src != "" {
		return specs.Mount{Destination: "/dev/shm", Type: "bind", Source: src, Options: []string{"rbind", "rprivate", "rw"}}
	}
	return specs.Mount{Destination: "/dev/shm", Type: "tmpfs", Source: "shm", Options: []string{"nosuid", "noexec", "nodev", "mode=1777", shmSize}}
}

// withoutShadowed drops the defaults a container's mount replaces, and
// everything below /dev when the container brings its own /dev, as
// containerd does.
func withoutShadowed(defaults, own []specs.Mount) []specs.Mount {
	dests := map[string]bool{}
	for _, m := range own {
		dests[m.Destination] = true
	}
	var out []specs.Mount
	for _, m := range defaults {
		if dests[m.Destination] || dests["/dev"] && strings.HasPrefix(m.Destination, "/dev/") {
			continue
		}
		out = append(out, m)
	}
	return out
}

// volumeMounts are the container's bind mounts, parents before children
// (containerd sorts them by depth, whatever order the pod lists them in).
// The propagation is the CRI's: private by default, rslave for
// HostToContainer (mounts the host makes later below the source show up
// inside), rshared for Bidirectional (and mounts made inside show up on the
// host). An image volume is its image's root filesystem (SubPath of it),
// read-only.
func volumeMounts(ms []runtime.Mount, imageRoots map[string]string) ([]specs.Mount, error) {
	var out []specs.Mount
	for _, m := range ms {
		src, err := mountSource(m, imageRoots)
		if err != nil {
			return nil, err
		}
		opts := []string{"rbind", propagation(m.Propagation), "rw"}
		if m.ReadOnly || m.Image != "" {
			opts[2] = "ro"
		}
		out = append(out, specs.Mount{Destination: filepath.Clean(m.ContainerPath), Type: "bind", Source: src, Options: opts})
	}
	sort.SliceStable(out, func(i, j int) bool { return depth(out[i].Destination) < depth(out[j].Destination) })
	return out, nil
}

// mountSource is a bind mount's host path, or an image volume's root.
func mountSource(m runtime.Mount, imageRoots map[string]string) (string, error) {
	if !filepath.IsAbs(m.ContainerPath) {
		return "", fmt.Errorf("mount %q: the container path must be absolute", m.ContainerPath)
	}
	if m.Image == "" {
		return m.HostPath, nil
	}
	root, ok := imageRoots[m.Image]
	if !ok {
		return "", fmt.Errorf("image volume %s at %s: the image's root filesystem is not prepared", m.Image, m.ContainerPath)
	}
	if m.SubPath != "" && !filepath.IsLocal(m.SubPath) {
		return "", fmt.Errorf("image volume %s: subPath %q leaves the image", m.Image, m.SubPath)
	}
	return filepath.Join(root, m.SubPath), nil
}

func propagation(mode string) string {
	switch mode {
	case "HostToContainer":
		return "rslave"
	case "Bidirectional":
		return "rshared"
	}
	return "rprivate"
}

// rootfsPropagation: a mount shared with the host needs a shared root to
// hang in, as containerd sets it; otherwise runc's default (rslave).
func rootfsPropagation(ms []runtime.Mount) string {
	for _, m := range ms {
		if m.Propagation == "Bidirectional" {
			return "rshared"
		}
	}
	return ""
}

func depth(p string) int { return strings.Count(filepath.Clean(p), "/") }

// The kubelet's defaults (securitycontext.DefaultProcMount*), which it sends
// the CRI runtimes for every container that is not privileged and whose
// procMount is Default.
var (
	defaultMaskedPaths = []string{
		"/proc/asound", "/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
		"/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi",
		"/sys/firmware", "/sys/devices/virtual/powercap",
	}
	defaultReadonlyPaths = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
)

// orDefault is the contract's rule: nil keeps the defaults, an empty list
// means none.
func orDefault(paths, defaults []string) []string {
	if paths == nil {
		paths = defaults
	}
	return slices.Clone(paths)
}
