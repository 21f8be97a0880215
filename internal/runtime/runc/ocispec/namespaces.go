package ocispec

import (
	"fmt"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/runlet/runlet/internal/runtime"
)

// setNamespaces joins the pod's network, IPC and UTS namespaces by path,
// and its PID namespace with ShareProcessNamespace; a host namespace is
// the host's by being left out. Mounts are the container's own, and so
// are its processes unless the pod shares them.
func setNamespaces(s *specs.Spec, in Input) error {
	pod, sec := in.Pod.Config, in.Container.Security
	hostPID := pod.HostPID || sec.HostPID
	ns := []specs.LinuxNamespace{{Type: specs.MountNamespace}}
	if in.Host.Cgroups.V2 {
		// A cgroup view of its own on cgroup v2 only, as podman, containerd
		// and Docker give. On v1, runc mounts each hierarchy anew in a
		// cgroup namespace, about 6 ms a hierarchy, half a container's
		// start; without one it binds the container's own cgroup
		// directories, which show the container the same files.
		ns = append(ns, specs.LinuxNamespace{Type: specs.CgroupNamespace})
	}
	for _, j := range []struct {
		typ        specs.LinuxNamespaceType
		skip       bool
		path, what string
	}{
		{specs.NetworkNamespace, pod.HostNetwork, podNet(in.Pod), "network"},
		{specs.IPCNamespace, pod.HostIPC || sec.HostIPC, in.Pod.IPC, "IPC"},
		// The host's network comes with the host's name, as on the kubelet.
		{specs.UTSNamespace, pod.HostNetwork, in.Pod.UTS, "UTS"},
		{specs.PIDNamespace, hostPID || !pod.ShareProcessNamespace, in.Pod.PID, "PID"},
	} {
		if j.skip {
			continue
		}
		if j.path == "" {
			return fmt.Errorf("the pod has no %s namespace to join", j.what)
		}
		ns = append(ns, specs.LinuxNamespace{Type: j.typ, Path: j.path})
	}
	if !hostPID && !pod.ShareProcessNamespace {
		ns = append(ns, specs.LinuxNamespace{Type: specs.PIDNamespace})
	}
	if u := pod.UserNS; u != nil {
		// The pod's, which owns its other namespaces: joined first (runc
		// orders it so), with its mappings for what runc sets up as root.
		if in.Pod.User == "" {
			return fmt.Errorf("the pod has no user namespace to join")
		}
		ns = append(ns, specs.LinuxNamespace{Type: specs.UserNamespace, Path: in.Pod.User})
		s.Linux.UIDMappings, s.Linux.GIDMappings = idMappings(u.UIDs), idMappings(u.GIDs)
	}
	s.Linux.Namespaces = ns
	return nil
}

func idMappings(m []runtime.IDMapping) []specs.LinuxIDMapping {
	out := make([]specs.LinuxIDMapping, 0, len(m))
	for _, e := range m {
		out = append(out, specs.LinuxIDMapping{ContainerID: e.ContainerID, HostID: e.HostID, Size: e.Length})
	}
	return out
}

// podNet is the network namespace given for the pod, else the one the
// core's pod network made.
func podNet(p Pod) string {
	if p.Net != "" {
		return p.Net
	}
	return p.Config.NetNS
}

// hostname is the pod's; a pod on the host's network has the host's
// (runc refuses a name without a UTS namespace of the pod's).
func hostname(pod runtime.SandboxConfig) string {
	if pod.HostNetwork {
		return ""
	}
	return pod.Hostname
}

// pingGroupRange is a sysctl podman sets in every container with a network
// namespace of its own (containers.conf default_sysctls): root's group may
// ping through ICMP sockets, without CAP_NET_RAW, which the default
// capabilities lack.
const pingGroupRange = "net.ipv4.ping_group_range"

// setSysctls sets the pod's sysctls. They live in the pod's namespaces, so
// each container sets the same values again; one in a namespace the pod
// shares with the host is refused here, as the kubelet and runc refuse it.
func setSysctls(s *specs.Spec, in Input) error {
	pod, sec := in.Pod.Config, in.Container.Security
	out := map[string]string{}
	if !pod.HostNetwork {
		out[pingGroupRange] = "0 0"
	}
	for k, v := range pod.Sysctls {
		switch {
		case pod.HostNetwork && strings.HasPrefix(k, "net."):
			return fmt.Errorf("sysctl %s cannot be set on the host's network", k)
		case (pod.HostIPC || sec.HostIPC) && ipcSysctl(k):
			return fmt.Errorf("sysctl %s cannot be set in the host's IPC namespace", k)
		}
		out[k] = v
	}
	if len(out) > 0 {
		s.Linux.Sysctl = out
	}
	return nil
}

// ipcSysctl: the sysctls of the IPC namespace, as runc's validator lists them.
func ipcSysctl(k string) bool {
	switch k {
	case "kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.sem",
		"kernel.shmall", "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced":
		return true
	}
	return strings.HasPrefix(k, "fs.mqueue.")
}
