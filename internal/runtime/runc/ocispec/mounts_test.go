package ocispec

import (
	"reflect"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/runlet/runlet/internal/runtime"
)

func destinations(ms []specs.Mount) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Destination)
	}
	return out
}

func mountAt(ms []specs.Mount, dest string) *specs.Mount {
	for i := range ms {
		if ms[i].Destination == dest {
			return &ms[i]
		}
	}
	return nil
}

func TestDefaultMounts(t *testing.T) {
	s := build(t, base())
	want := []string{"/proc", "/dev", "/dev/pts", "/dev/shm", "/dev/mqueue", "/sys", "/sys/fs/cgroup"}
	if got := destinations(s.Mounts); !reflect.DeepEqual(got, want) {
		t.Errorf("mounts %v; want %v", got, want)
	}
	for _, dest := range []string{"/sys", "/sys/fs/cgroup"} {
		if m := mountAt(s.Mounts, dest); !strings.Contains(strings.Join(m.Options, ","), "ro") {
			t.Errorf("%s: %v; want read-only", dest, m.Options)
		}
	}
	if m := mountAt(s.Mounts, "/dev/shm"); m.Type != "tmpfs" || !strings.Contains(strings.Join(m.Options, ","), "size=65536k") {
		t.Errorf("/dev/shm without a pod's: %+v; want a 64 MiB tmpfs", m)
	}
	in := base()
	in.Container.Security.Privileged = true
	s = build(t, in)
	for _, dest := range []string{"/sys", "/sys/fs/cgroup"} {
		if m := mountAt(s.Mounts, dest); m.Options[len(m.Options)-1] != "rw" {
			t.Errorf("privileged %s: %v; want writable", dest, m.Options)
		}
	}
}

func TestShm(t *testing.T) {
	in := base()
	in.Pod.Shm = "/var/lib/runlet/pods/u1/shm"
	if m := mountAt(build(t, in).Mounts, "/dev/shm"); m.Type != "bind" || m.Source != in.Pod.Shm {
		t.Errorf("/dev/shm %+v; want the pod's, bound", m)
	}
	in.Pod.Config.HostIPC = true
	if m := mountAt(build(t, in).Mounts, "/dev/shm"); m.Source != "/dev/shm" {
		t.Errorf("/dev/shm with HostIPC %+v; want the host's", m)
	}
}

// TestVolumeMounts: podman's bind options for the same mounts, the
// propagation of each mode, parents before children, image volumes.
func TestVolumeMounts(t *testing.T) {
	in := base()
	in.ImageRoots = map[string]string{"localhost/data:1": "/var/lib/runlet/images/abc/rootfs"}
	in.Container.Mounts = []runtime.Mount{
		{HostPath: "/var/lib/kubelet/pods/u1/volumes/a/sub", ContainerPath: "/data/sub/", ReadOnly: true},
		{HostPath: "/var/lib/kubelet/pods/u1/volumes/a", ContainerPath: "/data", Propagation: "HostToContainer"},
		{HostPath: "/mnt/shared", ContainerPath: "/shared", Propagation: "Bidirectional"},
		{HostPath: "/var/lib/kubelet/pods/u1/etc-hosts", ContainerPath: "/etc/hosts"},
		{Image: "localhost/data:1", SubPath: "models", ContainerPath: "/models"},
	}
	s := build(t, in)
	for _, tc := range []struct {
		dest, src string
		opts      []string
	}{
		{"/data", "/var/lib/kubelet/pods/u1/volumes/a", []string{"rbind", "rslave", "rw"}},
		{"/data/sub", "/var/lib/kubelet/pods/u1/volumes/a/sub", []string{"rbind", "rprivate", "ro"}},
		{"/shared", "/mnt/shared", []string{"rbind", "rshared", "rw"}},
		{"/etc/hosts", "/var/lib/kubelet/pods/u1/etc-hosts", []string{"rbind", "rprivate", "rw"}},
		{"/models", "/var/lib/runlet/images/abc/rootfs/models", []string{"rbind", "rprivate", "ro"}},
	} {
		m := mountAt(s.Mounts, tc.dest)
		if m == nil || m.Type != "bind" || m.Source != tc.src || !reflect.DeepEqual(m.Options, tc.opts) {
			t.Errorf("%s: %+v; want bind of %s with %v", tc.dest, m, tc.src, tc.opts)
		}
	}
	got := destinations(s.Mounts)
	if i, j := indexOf(got, "/data"), indexOf(got, "/data/sub"); i > j {
		t.Errorf("mounts %v: /data/sub before its parent", got)
	}
	if s.Linux.RootfsPropagation != "rshared" {
		t.Errorf("rootfs propagation %q; want rshared for a Bidirectional mount", s.Linux.RootfsPropagation)
	}
}

func indexOf(s []string, v string) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	return -1
}

func TestMountsReplaceDefaults(t *testing.T) {
	in := base()
	in.Container.Mounts = []runtime.Mount{{HostPath: "/big-shm", ContainerPath: "/dev/shm"}}
	s := build(t, in)
	if got := destinations(s.Mounts); indexOf(got, "/dev/shm") != len(got)-1 || strings.Count(strings.Join(got, " "), "/dev/shm") != 1 {
		t.Errorf("mounts %v; want the container's /dev/shm only", got)
	}
	in.Container.Mounts = []runtime.Mount{{HostPath: "/dev", ContainerPath: "/dev"}}
	want := []string{"/proc", "/sys", "/sys/fs/cgroup", "/dev"}
	if got := destinations(build(t, in).Mounts); !reflect.DeepEqual(got, want) {
		t.Errorf("a container's /dev: mounts %v; want %v", got, want)
	}
}

func TestMountErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    runtime.Mount
	}{
		{"relative container path", runtime.Mount{HostPath: "/a", ContainerPath: "data"}},
		{"image not prepared", runtime.Mount{Image: "localhost/none:1", ContainerPath: "/x"}},
		{"subPath out of the image", runtime.Mount{Image: "localhost/data:1", SubPath: "../../etc", ContainerPath: "/x"}},
	} {
		in := base()
		in.ImageRoots = map[string]string{"localhost/data:1": "/images/data"}
		in.Container.Mounts = []runtime.Mount{tc.m}
		if _, err := Build(in); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

func TestMaskedPaths(t *testing.T) {
	s := build(t, base())
	if !reflect.DeepEqual(s.Linux.MaskedPaths, defaultMaskedPaths) || !reflect.DeepEqual(s.Linux.ReadonlyPaths, defaultReadonlyPaths) {
		t.Errorf("masked %v, read-only %v; want the kubelet's defaults", s.Linux.MaskedPaths, s.Linux.ReadonlyPaths)
	}
	s.Linux.MaskedPaths[0] = "changed"
	if defaultMaskedPaths[0] == "changed" {
		t.Fatal("a spec shares the defaults' array")
	}
	in := base()
	in.Container.Security.MaskedPaths, in.Container.Security.ReadonlyPaths = []string{}, []string{}
	s = build(t, in)
	if len(s.Linux.MaskedPaths) != 0 || len(s.Linux.ReadonlyPaths) != 0 {
		t.Errorf("procMount Unmasked: masked %v, read-only %v; want none", s.Linux.MaskedPaths, s.Linux.ReadonlyPaths)
	}
	in.Container.Security.MaskedPaths = []string{"/proc/x"}
	if s = build(t, in); !reflect.DeepEqual(s.Linux.MaskedPaths, []string{"/proc/x"}) {
		t.Errorf("given masked paths %v; want them as given", s.Linux.MaskedPaths)
	}
	in = base()
	in.Container.Security.Privileged = true
	if s = build(t, in); s.Linux.MaskedPaths != nil || s.Linux.ReadonlyPaths != nil {
		t.Errorf("privileged: masked %v, read-only %v; want none", s.Linux.MaskedPaths, s.Linux.ReadonlyPaths)
	}
}
