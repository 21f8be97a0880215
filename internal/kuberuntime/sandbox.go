package kuberuntime

import (
	"fmt"
	"strings"

	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
	utilsysctl "k8s.io/component-helpers/node/util/sysctl"
)

// prepareSandbox completes a sandbox config with the pod's namespaces,
// sysctls, user namespace and pod-level cgroup, and warns of what the pod
// asks for that this node cannot honour.
func (m *Manager) prepareSandbox(pod *v1.Pod, cfg *runtime.SandboxConfig) error {
	if err := m.podUserNamespace(pod, cfg); err != nil {
		return err
	}
	sandboxSecurity(pod, cfg)
	cfg.Resources = podResources(pod, m.node)
	if fields := unhonoured(pod, m.node); len(fields) > 0 {
		m.event(pod, v1.EventTypeWarning, "UnsupportedField",
			"this node cannot honour %s: the pod runs without them", strings.Join(fields, ", "))
	}
	return nil
}

// podUserNamespace gives a pod with hostUsers: false its mappings. Where the
// backend has no user namespaces the pod is refused, as the kubelet refuses
// it on a runtime without them.
func (m *Manager) podUserNamespace(pod *v1.Pod, cfg *runtime.SandboxConfig) error {
	if !ownUserNamespace(pod) {
		return nil
	}
	if !m.caps.UserNamespaces || m.userns == nil {
		return fmt.Errorf("can't set `spec.hostUsers: false`, runtime handler %q does not support user namespaces", m.runtimeName)
	}
	ns, err := m.userns.Mappings(string(pod.UID))
	if err != nil {
		return err
	}
	cfg.UserNS = ns
	return nil
}

// ownUserNamespace reports a pod with hostUsers: false (the default is the
// host's user namespace).
func ownUserNamespace(pod *v1.Pod) bool {
	return pod.Spec.HostUsers != nil && !*pod.Spec.HostUsers
}

// sandboxSecurity sets the pod-level namespaces and sysctls (names with
// "/" separators normalized to dots, as the kernel spells them).
func sandboxSecurity(pod *v1.Pod, cfg *runtime.SandboxConfig) {
	cfg.HostPID, cfg.HostIPC = pod.Spec.HostPID, pod.Spec.HostIPC
	cfg.ShareProcessNamespace = pod.Spec.ShareProcessNamespace != nil && *pod.Spec.ShareProcessNamespace
	if sc := pod.Spec.SecurityContext; sc != nil && len(sc.Sysctls) > 0 {
		cfg.Sysctls = make(map[string]string, len(sc.Sysctls))
		for _, s := range sc.Sysctls {
			cfg.Sysctls[utilsysctl.NormalizeName(s.Name)] = s.Value
		}
	}
}

// unhonoured lists the security and resource fields of the pod that this
// node accepts but cannot apply, so that none is ignored silently.
func unhonoured(pod *v1.Pod, node NodeOptions) []string {
	var out []string
	psc := pod.Spec.SecurityContext
	if psc != nil {
		if psc.SELinuxOptions != nil && !node.SELinux {
			out = append(out, "spec.securityContext.seLinuxOptions (SELinux is not enabled on this host)")
		}
		if psc.WindowsOptions != nil {
			out = append(out, "spec.securityContext.windowsOptions (a Linux node)")
		}
	}
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			out = append(out, unhonouredInContainer(&list[i], node)...)
		}
	}
	return out
}

func unhonouredInContainer(c *v1.Container, node NodeOptions) []string {
	var out []string
	field := func(name string) string { return fmt.Sprintf("containers[%s].%s", c.Name, name) }
	if sc := c.SecurityContext; sc != nil {
		if sc.SELinuxOptions != nil && !node.SELinux {
			out = append(out, field("securityContext.seLinuxOptions (SELinux is not enabled on this host)"))
		}
		if sc.WindowsOptions != nil {
			out = append(out, field("securityContext.windowsOptions (a Linux node)"))
		}
		if sc.Capabilities != nil && sc.Privileged != nil && *sc.Privileged {
			out = append(out, field("securityContext.capabilities (a privileged container has all of them)"))
		}
	}
	return out
}
