package ocispec

import (
	"reflect"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/runlet/runlet/internal/runtime"
)

func TestNamespaces(t *testing.T) {
	own := func(typ specs.LinuxNamespaceType) specs.LinuxNamespace { return specs.LinuxNamespace{Type: typ} }
	mnt := own(specs.MountNamespace)
	net := specs.LinuxNamespace{Type: specs.NetworkNamespace, Path: "/run/netns/cni-1"}
	ipc := specs.LinuxNamespace{Type: specs.IPCNamespace, Path: "/proc/10/ns/ipc"}
	uts := specs.LinuxNamespace{Type: specs.UTSNamespace, Path: "/proc/10/ns/uts"}
	for _, tc := range []struct {
		name string
		pod  func(*Input)
		want []specs.LinuxNamespace
	}{
		{"the pod's net, ipc, uts; pid of its own", func(*Input) {}, []specs.LinuxNamespace{mnt, net, ipc, uts, own(specs.PIDNamespace)}},
		{"a shared process namespace", func(in *Input) { in.Pod.Config.ShareProcessNamespace = true },
			[]specs.LinuxNamespace{mnt, net, ipc, uts, {Type: specs.PIDNamespace, Path: "/proc/10/ns/pid"}}},
		{"host network and its name", func(in *Input) { in.Pod.Config.HostNetwork = true }, []specs.LinuxNamespace{mnt, ipc, own(specs.PIDNamespace)}},
		{"host IPC", func(in *Input) { in.Pod.Config.HostIPC = true }, []specs.LinuxNamespace{mnt, net, uts, own(specs.PIDNamespace)}},
		{"host PID, shared or not", func(in *Input) { in.Pod.Config.HostPID, in.Pod.Config.ShareProcessNamespace = true, true },
			[]specs.LinuxNamespace{mnt, net, ipc, uts}},
		{"host PID and IPC from the container's config", func(in *Input) { in.Container.Security.HostPID, in.Container.Security.HostIPC = true, true },
			[]specs.LinuxNamespace{mnt, net, uts}},
		{"a cgroup view of its own on cgroup v2", func(in *Input) { in.Host.Cgroups.V2 = true },
			[]specs.LinuxNamespace{mnt, own(specs.CgroupNamespace), net, ipc, uts, own(specs.PIDNamespace)}},
		{"a network namespace given for the pod", func(in *Input) { in.Pod.Net = "/proc/10/ns/net" },
			[]specs.LinuxNamespace{mnt, {Type: specs.NetworkNamespace, Path: "/proc/10/ns/net"}, ipc, uts, own(specs.PIDNamespace)}},
	} {
		in := base()
		tc.pod(&in)
		if got := build(t, in).Linux.Namespaces; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %v\nwant %v", tc.name, got, tc.want)
		}
	}
}

func TestNamespaceMissing(t *testing.T) {
	for _, tc := range []struct {
		name string
		pod  func(*Input)
	}{
		{"network", func(in *Input) { in.Pod.Config.NetNS = "" }},
		{"IPC", func(in *Input) { in.Pod.IPC = "" }},
		{"UTS", func(in *Input) { in.Pod.UTS = "" }},
		{"PID", func(in *Input) { in.Pod.PID, in.Pod.Config.ShareProcessNamespace = "", true }},
	} {
		in := base()
		tc.pod(&in)
		if _, err := Build(in); err == nil || !strings.Contains(err.Error(), tc.name+" namespace") {
			t.Errorf("no %s namespace to join: %v; want an error", tc.name, err)
		}
	}
}

func TestHostname(t *testing.T) {
	if got := build(t, base()).Hostname; got != "pod" {
		t.Errorf("hostname %q; want the pod's", got)
	}
	in := base()
	in.Pod.Config.HostNetwork = true
	if got := build(t, in).Hostname; got != "" {
		t.Errorf("host network: hostname %q; want none (the host's)", got)
	}
}

func TestSysctls(t *testing.T) {
	in := base()
	in.Pod.Config.Sysctls = map[string]string{"kernel.shm_rmid_forced": "1", "net.ipv4.ip_unprivileged_port_start": "77"}
	want := map[string]string{"kernel.shm_rmid_forced": "1", "net.ipv4.ip_unprivileged_port_start": "77", "net.ipv4.ping_group_range": "0 0"}
	if got := build(t, in).Linux.Sysctl; !reflect.DeepEqual(got, want) {
		t.Errorf("sysctls %v; want %v (podman's ping_group_range added)", got, want)
	}
	in.Pod.Config.Sysctls = map[string]string{"net.ipv4.ping_group_range": "0 2147483647"}
	if got := build(t, in).Linux.Sysctl[pingGroupRange]; got != "0 2147483647" {
		t.Errorf("the pod's ping_group_range: %q; want it over podman's", got)
	}
	in = base()
	in.Pod.Config.HostNetwork = true
	if got := build(t, in).Linux.Sysctl; got != nil {
		t.Errorf("host network: sysctls %v; want none", got)
	}
	for _, tc := range []struct {
		name   string
		sysctl string
		pod    runtime.SandboxConfig
	}{
		{"net on the host's network", "net.core.somaxconn", runtime.SandboxConfig{HostNetwork: true}},
		{"IPC in the host's IPC namespace", "kernel.shm_rmid_forced", runtime.SandboxConfig{HostIPC: true, NetNS: "/run/netns/x"}},
		{"mqueue in the host's IPC namespace", "fs.mqueue.msg_max", runtime.SandboxConfig{HostIPC: true, NetNS: "/run/netns/x"}},
	} {
		in := base()
		tc.pod.Sysctls = map[string]string{tc.sysctl: "1"}
		in.Pod.Config = tc.pod
		if _, err := Build(in); err == nil || !strings.Contains(err.Error(), tc.sysctl) {
			t.Errorf("%s: %v; want an error naming %s", tc.name, err, tc.sysctl)
		}
	}
}
