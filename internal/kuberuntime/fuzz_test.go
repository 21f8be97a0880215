package kuberuntime

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/runlet/runlet/internal/admission"
	"github.com/runlet/runlet/internal/envvars"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/podman"
	"github.com/runlet/runlet/internal/securitycontext"
	"github.com/runlet/runlet/internal/sysctl"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// FuzzPodToPodmanSpec feeds pod specs (JSON, as the API and the static pod
// sources hand them over, unvalidated) and an image user through the whole
// translation: admission, the container and sandbox configs, and podman's
// create specs. Nothing may panic, and what reaches podman must be what the
// kubelet would ask of a CRI runtime. Seeds: testdata/fuzz/FuzzPodToPodmanSpec.
func FuzzPodToPodmanSpec(f *testing.F) {
	node := NodeOptions{
		Allocatable:    v1.ResourceList{v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("4Gi")},
		MemoryCapacity: 4 << 30, PodPidsLimit: 1024, SeccompRoot: "/var/lib/runlet/seccomp",
	}
	allow, err := sysctl.NewAllowlist("6.1.0", []string{"kernel.msg*"})
	if err != nil {
		f.Fatal(err)
	}
	admit := admission.New(admission.Config{Allocatable: node.Allocatable, Sysctls: allow})
	f.Fuzz(func(t *testing.T, podJSON []byte, imageUser string) {
		var pod v1.Pod
		if json.Unmarshal(podJSON, &pod) != nil {
			return
		}
		admit.Admit(&pod, []*v1.Pod{&pod})
		sb := sandboxConfig(&pod)
		sandboxSecurity(&pod, &sb)
		sb.Resources = podResources(&pod, node)
		checkResources(t, "pod", sb.Resources)
		for _, c := range append(append([]v1.Container{}, pod.Spec.InitContainers...), pod.Spec.Containers...) {
			translateContainer(t, &pod, &c, sb, imageUser, node)
		}
	})
}

func translateContainer(t *testing.T, pod *v1.Pod, c *v1.Container, sb runtime.SandboxConfig, imageUser string, node NodeOptions) {
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.ResourceFieldRef != nil {
			_, _ = envvars.ResourceFieldValue(pod, c, e.ValueFrom.ResourceFieldRef, node.Allocatable)
		}
	}
	cfg := containerConfig(pod, c, nil, 0, false)
	sec, err := containerSecurity(pod, c, imageUser, node)
	if err != nil {
		return // refused before create (runAsNonRoot, a bad seccomp profile): nothing reaches podman
	}
	cfg.Security, cfg.Resources = sec, containerResources(pod, c, node)
	checkResources(t, "container", cfg.Resources)
	podSpec, spec := podman.CreateSpecs(sb, cfg)
	for _, v := range []any{podSpec, spec} {
		if _, err := json.Marshal(v); err != nil {
			t.Fatalf("create spec does not encode: %v", err)
		}
	}
	eff := securitycontext.DetermineEffectiveSecurityContext(pod, c)
	if spec.Privileged != (eff.Privileged != nil && *eff.Privileged) {
		t.Errorf("privileged %v; effective securityContext %+v", spec.Privileged, eff)
	}
	if spec.NoNewPrivileges != (eff.AllowPrivilegeEscalation != nil && !*eff.AllowPrivilegeEscalation) {
		t.Errorf("no_new_privileges %v; allowPrivilegeEscalation %v", spec.NoNewPrivileges, eff.AllowPrivilegeEscalation)
	}
	if spec.ReadOnlyFilesystem != (eff.ReadOnlyRootFilesystem != nil && *eff.ReadOnlyRootFilesystem) {
		t.Errorf("read_only_filesystem %v; readOnlyRootFilesystem %v", spec.ReadOnlyFilesystem, eff.ReadOnlyRootFilesystem)
	}
	checkUser(t, spec.User, eff)
	for _, cp := range append(append([]string{}, spec.CapAdd...), spec.CapDrop...) {
		if cp != "ALL" && !strings.HasPrefix(cp, "CAP_") {
			t.Errorf("capability %q", cp)
		}
	}
	if p := spec.SeccompProfilePath; p != "" && p != "unconfined" {
		if rel, err := filepath.Rel(node.SeccompRoot, p); err != nil || strings.HasPrefix(rel, "..") {
			t.Errorf("seccomp profile %q outside %s", p, node.SeccompRoot)
		}
	}
	if spec.OOMScoreAdj != nil && (*spec.OOMScoreAdj < -1000 || *spec.OOMScoreAdj > 1000) {
		t.Errorf("oom_score_adj %d", *spec.OOMScoreAdj)
	}
	for k := range podSpec.Sysctl {
		if i := strings.IndexAny(k, "./"); i >= 0 && k[i] == '/' {
			t.Errorf("sysctl %q not normalized", k)
		}
	}
	checkLimits(t, spec.ResourceLimits)
	checkLimits(t, podSpec.ResourceLimits)
}

// checkUser: an explicit runAsUser leads podman's "user[:group]"; numeric
// IDs are valid ones.
func checkUser(t *testing.T, user string, eff *v1.SecurityContext) {
	name, group, hasGroup := strings.Cut(user, ":")
	for _, id := range []string{name, group} {
		if n, err := strconv.ParseInt(id, 10, 64); err == nil && (n < 0 || n > 1<<31-1) {
			t.Errorf("user %q: ID out of range", user)
		}
	}
	if eff.RunAsUser != nil && name != strconv.FormatInt(*eff.RunAsUser, 10) {
		t.Errorf("user %q; runAsUser %d", user, *eff.RunAsUser)
	}
	if eff.RunAsGroup != nil && (!hasGroup || group != strconv.FormatInt(*eff.RunAsGroup, 10)) {
		t.Errorf("user %q; runAsGroup %d", user, *eff.RunAsGroup)
	}
	if eff.RunAsGroup == nil && hasGroup {
		t.Errorf("user %q without runAsGroup", user)
	}
}

func checkResources(t *testing.T, what string, r runtime.Resources) {
	if r.CPUMillis < 0 || r.MemoryBytes < 0 || r.PidsLimit < 0 {
		t.Errorf("%s resources %+v: negative", what, r)
	}
	if r.CPUShares != 0 && (r.CPUShares < minShares || r.CPUShares > maxShares) {
		t.Errorf("%s cpu shares %d outside [%d, %d]", what, r.CPUShares, minShares, maxShares)
	}
}

// checkLimits: what the kernel accepts, as the kubelet bounds it.
func checkLimits(t *testing.T, lr *specs.LinuxResources) {
	if lr == nil {
		return
	}
	if c := lr.CPU; c != nil {
		if c.Quota != nil && (*c.Quota < 1000 || c.Period == nil || *c.Period != 100000) {
			t.Errorf("cpu quota %d period %v", *c.Quota, c.Period)
		}
		if c.Shares != nil && (*c.Shares < minShares || *c.Shares > maxShares) {
			t.Errorf("cpu shares %d", *c.Shares)
		}
	}
	if m := lr.Memory; m != nil && (m.Limit == nil || *m.Limit <= 0 || m.Swap != nil && *m.Swap != *m.Limit) {
		t.Errorf("memory %+v", m)
	}
	if lr.Pids != nil && (lr.Pids.Limit == nil || *lr.Pids.Limit <= 0) {
		t.Errorf("pids limit %v", lr.Pids.Limit)
	}
}
