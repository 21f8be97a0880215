package kuberuntime

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/securitycontext"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// NodeOptions are the node-wide settings a pod's backend config depends on.
type NodeOptions struct {
	// Allocatable is what the node offers pods: the default limits the
	// downward API reports for a container without its own.
	Allocatable v1.ResourceList
	// MemoryCapacity is the machine's memory, for Burstable containers'
	// oom_score_adj.
	MemoryCapacity int64
	// PodPidsLimit caps the processes of each pod (--pod-max-pids); zero or
	// less: unlimited.
	PodPidsLimit int64
	// SeccompRoot holds Localhost seccomp profiles (<root-dir>/seccomp).
	SeccompRoot string
	// SeccompDefault makes RuntimeDefault the profile of containers that name
	// none (--seccomp-default); else they run Unconfined, as on the kubelet.
	SeccompDefault bool
	// AppArmor and SELinux say whether the host enforces them.
	AppArmor, SELinux bool
}

// prepareContainer completes a container's config with its security
// context and resources. The image's user is read only when the decision
// needs it: runAsNonRoot without runAsUser, or runAsGroup alone.
func (m *Manager) prepareContainer(ctx context.Context, pod *v1.Pod, c *v1.Container, cfg *runtime.ContainerConfig) error {
	imageUser := ""
	if needsImageUser(pod, c) {
		u, err := m.rt.ImageUser(ctx, c.Image)
		if err != nil {
			return fmt.Errorf("reading the user of image %q: %w", c.Image, err)
		}
		imageUser = u
	}
	sec, err := containerSecurity(pod, c, imageUser, m.node)
	if err != nil {
		return err
	}
	cfg.Security = sec
	cfg.Resources = containerResources(pod, c, m.node)
	return nil
}

func needsImageUser(pod *v1.Pod, c *v1.Container) bool {
	sc := securitycontext.DetermineEffectiveSecurityContext(pod, c)
	if sc.RunAsUser != nil {
		return false
	}
	return sc.RunAsGroup != nil || sc.RunAsNonRoot != nil && *sc.RunAsNonRoot
}

// containerSecurity maps the container's effective securityContext (its
// own fields over the pod's) as the kubelet's
// determineEffectiveSecurityContext does. imageUser is the image's user,
// read only when needsImageUser says so; runAsNonRoot is checked against it.
func containerSecurity(pod *v1.Pod, c *v1.Container, imageUser string, node NodeOptions) (runtime.SecurityConfig, error) {
	sc := securitycontext.DetermineEffectiveSecurityContext(pod, c)
	if err := validateIDs(pod, sc); err != nil {
		return runtime.SecurityConfig{}, err
	}
	uid, username := parseImageUser(imageUser)
	if err := verifyRunAsNonRoot(pod, c, sc, uid, username); err != nil {
		return runtime.SecurityConfig{}, err
	}
	var out runtime.SecurityConfig
	switch {
	case sc.RunAsUser != nil:
		out.RunAsUser = ptrCopy(sc.RunAsUser)
	case sc.RunAsGroup != nil:
		// The group alone is set on the image's user, named or numeric.
		out.RunAsUser, out.Username = uid, username
	}
	out.RunAsGroup = ptrCopy(sc.RunAsGroup)
	out.SupplementalGroups = supplementalGroups(pod)
	out.Privileged = sc.Privileged != nil && *sc.Privileged
	if sc.Capabilities != nil && !out.Privileged {
		out.CapAdd = capNames(sc.Capabilities.Add)
		out.CapDrop = capNames(sc.Capabilities.Drop)
	}
	out.NoNewPrivs = securitycontext.AddNoNewPrivileges(sc)
	out.ReadOnlyRootfs = sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem
	seccomp, err := seccompProfile(pod, c, node)
	if err != nil {
		return runtime.SecurityConfig{}, err
	}
	out.Seccomp = seccomp
	if sc.ProcMount != nil && *sc.ProcMount == v1.UnmaskedProcMount {
		out.MaskedPaths, out.ReadonlyPaths = []string{}, []string{}
	}
	out.HostPID, out.HostIPC = pod.Spec.HostPID, pod.Spec.HostIPC
	if node.SELinux && sc.SELinuxOptions != nil {
		out.SELinuxOptions = seLinuxOptions(sc.SELinuxOptions)
	}
	if node.AppArmor {
		out.AppArmorProfile = appArmorProfile(pod, c)
	}
	return out, nil
}

// parseImageUser splits an image's "user[:group]" as the CRI runtimes do:
// a numeric user is a UID, anything else a name to resolve in the image.
// An image without a user runs as root.
func parseImageUser(user string) (*int64, string) {
	name, _, _ := strings.Cut(user, ":")
	if name == "" {
		return new(int64), ""
	}
	if id, err := strconv.ParseInt(name, 10, 64); err == nil {
		return &id, ""
	}
	return nil, name
}

// verifyRunAsNonRoot is the kubelet's check (kuberuntime's
// security_context_others.go), with its messages.
func verifyRunAsNonRoot(pod *v1.Pod, c *v1.Container, sc *v1.SecurityContext, uid *int64, username string) error {
	if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		return nil
	}
	if sc.RunAsUser != nil {
		if *sc.RunAsUser == 0 {
			return fmt.Errorf("container's runAsUser breaks non-root policy (pod: %q, container: %s)", formatPod(pod), c.Name)
		}
		return nil
	}
	switch {
	case uid == nil && len(username) > 0:
		return fmt.Errorf("container has runAsNonRoot and image has non-numeric user (%s), cannot verify user is non-root (pod: %q, container: %s)", username, formatPod(pod), c.Name)
	case uid != nil:
		if *uid == 0 {
			return fmt.Errorf("container has runAsNonRoot and image will run as root (pod: %q, container: %s)", formatPod(pod), c.Name)
		}
		if errs := validation.IsValidUserID(*uid); len(errs) > 0 {
			return fmt.Errorf("container has runAsNonRoot and image has an invalid user id (%d). (Must be 1-(%d)): %s (pod: %q, container: %s)",
				*uid, math.MaxInt32, strings.Join(errs, "; "), formatPod(pod), c.Name)
		}
	}
	return nil
}

// validateIDs refuses user and group IDs outside 0..2^31-1, as API
// validation would: static pods reach the node unvalidated.
func validateIDs(pod *v1.Pod, sc *v1.SecurityContext) error {
	ids := map[string]*int64{"runAsUser": sc.RunAsUser, "runAsGroup": sc.RunAsGroup}
	if psc := pod.Spec.SecurityContext; psc != nil {
		ids["fsGroup"] = psc.FSGroup
		for i := range psc.SupplementalGroups {
			ids[fmt.Sprintf("supplementalGroups[%d]", i)] = &psc.SupplementalGroups[i]
		}
	}
	for name, id := range ids {
		if id != nil && (*id < 0 || *id > math.MaxInt32) {
			return fmt.Errorf("invalid %s %d: must be between 0 and %d", name, *id, math.MaxInt32)
		}
	}
	return nil
}

// formatPod is the kubelet's format.Pod: name_namespace(uid).
func formatPod(pod *v1.Pod) string {
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}

// supplementalGroups are the pod's fsGroup, then its supplementalGroups,
// as the kubelet orders them.
func supplementalGroups(pod *v1.Pod) []int64 {
	psc := pod.Spec.SecurityContext
	if psc == nil {
		return nil
	}
	var out []int64
	if psc.FSGroup != nil {
		out = append(out, *psc.FSGroup)
	}
	return append(out, psc.SupplementalGroups...)
}

// capNames spells capabilities as the OCI runtimes do: "CAP_NET_ADMIN";
// "ALL" stays as it is.
func capNames(caps []v1.Capability) []string {
	if len(caps) == 0 {
		return nil
	}
	out := make([]string, 0, len(caps))
	for _, c := range caps {
		name := strings.ToUpper(strings.TrimSpace(string(c)))
		if name != "ALL" && !strings.HasPrefix(name, "CAP_") {
			name = "CAP_" + name
		}
		out = append(out, name)
	}
	return out
}

// seccompProfile is the container's profile, else the pod's, else the
// node's default, as the kubelet's getSeccompProfile decides.
func seccompProfile(pod *v1.Pod, c *v1.Container, node NodeOptions) (runtime.SeccompProfile, error) {
	var p *v1.SeccompProfile
	if c.SecurityContext != nil && c.SecurityContext.SeccompProfile != nil {
		p = c.SecurityContext.SeccompProfile
	} else if pod.Spec.SecurityContext != nil && pod.Spec.SecurityContext.SeccompProfile != nil {
		p = pod.Spec.SecurityContext.SeccompProfile
	}
	if p == nil {
		if node.SeccompDefault {
			return runtime.SeccompProfile{Type: runtime.SeccompRuntimeDefault}, nil
		}
		return runtime.SeccompProfile{Type: runtime.SeccompUnconfined}, nil
	}
	switch p.Type {
	case v1.SeccompProfileTypeRuntimeDefault:
		return runtime.SeccompProfile{Type: runtime.SeccompRuntimeDefault}, nil
	case v1.SeccompProfileTypeUnconfined:
		return runtime.SeccompProfile{Type: runtime.SeccompUnconfined}, nil
	case v1.SeccompProfileTypeLocalhost:
		if p.LocalhostProfile == nil || *p.LocalhostProfile == "" {
			return runtime.SeccompProfile{}, fmt.Errorf("localhostProfile must be set if seccomp profile type is Localhost")
		}
		name := *p.LocalhostProfile
		// The profile lives under the seccomp root; a path that climbs out
		// of it is refused rather than read.
		if filepath.IsAbs(name) || !filepath.IsLocal(name) {
			return runtime.SeccompProfile{}, fmt.Errorf("seccomp localhostProfile %q must be a relative path under %s", name, node.SeccompRoot)
		}
		return runtime.SeccompProfile{Type: runtime.SeccompLocalhost, Path: filepath.Join(node.SeccompRoot, name)}, nil
	}
	return runtime.SeccompProfile{}, fmt.Errorf("unsupported seccomp profile type %q", p.Type)
}

// seLinuxOptions are the label parts set, as "type:spc_t".
func seLinuxOptions(o *v1.SELinuxOptions) []string {
	var out []string
	for _, kv := range [][2]string{{"user", o.User}, {"role", o.Role}, {"type", o.Type}, {"level", o.Level}} {
		if kv[1] != "" {
			out = append(out, kv[0]+":"+kv[1])
		}
	}
	return out
}

// appArmorProfile is the container's AppArmor profile (else the pod's) in
// the backend's terms: "unconfined", a loaded profile's name, or "" for the
// runtime's default.
func appArmorProfile(pod *v1.Pod, c *v1.Container) string {
	var p *v1.AppArmorProfile
	if c.SecurityContext != nil && c.SecurityContext.AppArmorProfile != nil {
		p = c.SecurityContext.AppArmorProfile
	} else if pod.Spec.SecurityContext != nil {
		p = pod.Spec.SecurityContext.AppArmorProfile
	}
	if p == nil {
		return ""
	}
	switch p.Type {
	case v1.AppArmorProfileTypeUnconfined:
		return "unconfined"
	case v1.AppArmorProfileTypeLocalhost:
		if p.LocalhostProfile != nil {
			return *p.LocalhostProfile
		}
	}
	return ""
}

func ptrCopy(p *int64) *int64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
