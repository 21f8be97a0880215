package podman

import (
	"slices"
	"strconv"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/cgroups"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
)

// unconfined is podman's seccomp_profile_path for no filter at all.
const unconfined = "unconfined"

// securitySpec maps the contract's security config. Without an explicit
// user podman keeps the image's; a group alone comes with the image's user,
// which the core reads first.
func securitySpec(s runtime.SecurityConfig) libpod.SecuritySpec {
	spec := libpod.SecuritySpec{
		User:               userSpec(s),
		Privileged:         s.Privileged,
		NoNewPrivileges:    s.NoNewPrivs,
		ReadOnlyFilesystem: s.ReadOnlyRootfs,
		SelinuxOpts:        s.SELinuxOptions,
		ApparmorProfile:    s.AppArmorProfile,
	}
	for _, g := range s.SupplementalGroups {
		spec.Groups = append(spec.Groups, strconv.FormatInt(g, 10))
	}
	if !s.Privileged {
		// A privileged container has every capability; podman would still
		// drop what cap_drop names, the CRI runtimes do not.
		spec.CapAdd, spec.CapDrop = s.CapAdd, s.CapDrop
	}
	switch s.Seccomp.Type {
	case runtime.SeccompUnconfined:
		spec.SeccompProfilePath = unconfined
	case runtime.SeccompLocalhost:
		spec.SeccompProfilePath = s.Seccomp.Path
	}
	switch {
	case s.MaskedPaths != nil && len(s.MaskedPaths) == 0 && s.ReadonlyPaths != nil && len(s.ReadonlyPaths) == 0:
		// procMount Unmasked: podman's ALL lifts both its masked and its
		// read-only paths.
		spec.Unmask = []string{"ALL"}
	case len(s.MaskedPaths) > 0:
		// podman masks its defaults anyway (the same list as the kubelet's);
		// these come on top.
		spec.Mask = slices.Clone(s.MaskedPaths)
	}
	if s.HostPID {
		spec.PidNS = &libpod.Namespace{NSMode: "host"}
	}
	if s.HostIPC {
		spec.IpcNS = &libpod.Namespace{NSMode: "host"}
	}
	return spec
}

// userSpec is podman's "user[:group]".
func userSpec(s runtime.SecurityConfig) string {
	user := s.Username
	if s.RunAsUser != nil {
		user = strconv.FormatInt(*s.RunAsUser, 10)
	}
	if s.RunAsGroup != nil {
		if user == "" {
			user = "0" // no user known: root, as an image without USER runs
		}
		user += ":" + strconv.FormatInt(*s.RunAsGroup, 10)
	}
	return user
}

// applyPodSecurity sets the pod-level namespaces, sysctls and cgroup. The
// pod shares its PID namespace only when asked to (its infra process is
// then PID 1, as the pause container is); a pod in the host's IPC namespace
// does not share a private one.
func (b *Backend) applyPodSecurity(spec *libpod.PodSpec, cfg runtime.SandboxConfig) {
	if cfg.HostIPC {
		spec.SharedNamespaces = slices.DeleteFunc(slices.Clone(spec.SharedNamespaces), func(ns string) bool { return ns == "ipc" })
	}
	if cfg.ShareProcessNamespace && !cfg.HostPID && !slices.Contains(spec.SharedNamespaces, "pid") {
		spec.SharedNamespaces = append(slices.Clone(spec.SharedNamespaces), "pid")
	}
	if len(cfg.Sysctls) > 0 {
		spec.Sysctl = cfg.Sysctls
	}
	if b.podCgroups {
		// Its limits are runlet's to write (CreateSandbox).
		spec.CgroupParent = cgroups.PodCgroupPath(cfg.PodUID)
		return
	}
	spec.ResourceLimits = cgroups.Resources(cfg.Resources, b.cg, false)
}
