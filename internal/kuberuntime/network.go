package kuberuntime

import (
	"errors"
	"fmt"
	"os"

	"github.com/runlet/runlet/internal/network/dns"
	"github.com/runlet/runlet/internal/network/etchosts"
	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
)

// resolvConfPath is where the pod's resolv.conf is mounted.
const resolvConfPath = "/etc/resolv.conf"

// sandboxNetwork sets the pod's host name and writes its resolv.conf before
// its sandbox is created, as the kubelet's generatePodSandboxConfig and the
// CRI runtime do: the DNS policy's resolver configuration in containerd's
// format, and the pod's (short, or with setHostnameAsFQDN full) name for its
// UTS namespace. A pod on the host's network keeps the host's name.
func (m *Manager) sandboxNetwork(pod *v1.Pod, cfg *runtime.SandboxConfig) error {
	if m.dirs.Root != "" {
		if err := m.writeResolvConf(pod); err != nil {
			return err
		}
	}
	cfg.Hostname = ""
	if pod.Spec.HostNetwork {
		return nil
	}
	host, domain, err := etchosts.PodHostNameAndDomain(pod, m.dns.ClusterDomain)
	if err != nil {
		return err
	}
	cfg.Hostname, err = etchosts.NodenameForKernel(host, domain, pod.Spec.SetHostnameAsFQDN)
	return err
}

func (m *Manager) writeResolvConf(pod *v1.Pod) error {
	c, err := m.dns.GetPodDNS(pod)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(m.dirs.Pod(string(pod.UID)), 0o750); err != nil {
		return err
	}
	if err := dns.WriteResolvConf(m.dirs.ResolvConf(string(pod.UID)), c); err != nil {
		return fmt.Errorf("writing the pod's resolv.conf: %w", err)
	}
	return nil
}

// networkMounts adds the pod's kubelet-managed /etc/hosts (rewritten for
// every container start, as the kubelet's makeMounts does) and its
// resolv.conf to a container, unless the container mounts its own there.
// Without a root directory (unit tests of other parts) there is nowhere to
// write them, and the backend's own files serve.
func (m *Manager) networkMounts(pod *v1.Pod, c *v1.Container, sb *runtime.Sandbox, cfg *runtime.ContainerConfig) error {
	uid := string(pod.UID)
	if m.dirs.Root == "" {
		return nil
	}
	if etchosts.ShouldMount(pod, sb.IPs, c) {
		host, domain, err := etchosts.PodHostNameAndDomain(pod, m.dns.ClusterDomain)
		if err != nil {
			return err
		}
		path := m.dirs.EtcHosts(uid)
		if err := os.MkdirAll(m.dirs.Pod(uid), 0o750); err != nil {
			return err
		}
		if err := etchosts.Ensure(path, m.hostsFile, sb.IPs, host, domain, pod.Spec.HostAliases, pod.Spec.HostNetwork); err != nil {
			return fmt.Errorf("writing the pod's /etc/hosts: %w", err)
		}
		cfg.Mounts = append(cfg.Mounts, runtime.Mount{HostPath: path, ContainerPath: etchosts.Path, Relabel: true})
	}
	if mountsAt(c, resolvConfPath) {
		return nil
	}
	path := m.dirs.ResolvConf(uid)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		// Written with the sandbox; gone since (a wiped --root-dir).
		if err := m.writeResolvConf(pod); err != nil {
			return err
		}
	}
	cfg.Mounts = append(cfg.Mounts, runtime.Mount{HostPath: path, ContainerPath: resolvConfPath, Relabel: true})
	return nil
}

func mountsAt(c *v1.Container, path string) bool {
	for _, vm := range c.VolumeMounts {
		if vm.MountPath == path {
			return true
		}
	}
	return false
}

// removeNetworkFiles deletes the pod's hosts file and resolv.conf, and its
// directory if nothing else is left in it.
func (m *Manager) removeNetworkFiles(uid string) {
	if m.dirs.Root == "" {
		return
	}
	for _, p := range []string{m.dirs.EtcHosts(uid), m.dirs.ResolvConf(uid)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			m.log.WithError(err).WithField("podUID", uid).Warn("removing a pod file failed")
		}
	}
	_ = os.Remove(m.dirs.Pod(uid)) // only when empty
}
