package ocispec

import (
	"os"
	"path/filepath"
	"reflect"
	goruntime "runtime"
	"slices"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/runlet/runlet/internal/runtime"
)

// allowed reports whether a profile allows a syscall by a rule of its own,
// whatever the arguments.
func allowed(p *specs.LinuxSeccomp, name string) bool {
	for _, r := range p.Syscalls {
		if r.Action == specs.ActAllow && slices.Contains(r.Names, name) {
			return true
		}
	}
	return false
}

func TestSeccompRuntimeDefault(t *testing.T) {
	p := build(t, base()).Linux.Seccomp
	if p == nil || p.DefaultAction != specs.ActErrno || !allowed(p, "read") {
		t.Fatalf("RuntimeDefault: %+v; want the default profile", p)
	}
	if goruntime.GOARCH == "amd64" && !slices.Contains(p.Architectures, specs.ArchX86_64) {
		t.Errorf("architectures %v; want x86_64", p.Architectures)
	}
	// The profile follows the capabilities: mount only with CAP_SYS_ADMIN.
	if allowed(p, "mount") {
		t.Error("mount allowed without CAP_SYS_ADMIN")
	}
	in := base()
	in.Container.Security.CapAdd = []string{"CAP_SYS_ADMIN"}
	if !allowed(build(t, in).Linux.Seccomp, "mount") {
		t.Error("mount refused with CAP_SYS_ADMIN")
	}
}

func TestSeccompNone(t *testing.T) {
	in := base()
	in.Container.Security.Seccomp.Type = runtime.SeccompUnconfined
	if p := build(t, in).Linux.Seccomp; p != nil {
		t.Errorf("Unconfined: %+v; want no filter", p)
	}
	in = base()
	in.Container.Security.Privileged = true
	if p := build(t, in).Linux.Seccomp; p != nil {
		t.Error("privileged: a filter; want none")
	}
	in = base()
	in.Container.Security.Seccomp.Type = "Bogus"
	if _, err := Build(in); err == nil {
		t.Error("an unknown profile type built a spec")
	}
}

func TestSeccompLocalhost(t *testing.T) {
	dir := t.TempDir()
	profiles := map[string]string{
		// The OCI format, as the Kubernetes docs' examples write it.
		"oci.json": `{"defaultAction":"SCMP_ACT_LOG","syscalls":[{"names":["mkdir"],"action":"SCMP_ACT_ERRNO","errnoRet":1}]}`,
		// Docker's format, with a capability-conditional rule.
		"docker.json": `{"defaultAction":"SCMP_ACT_ALLOW","archMap":[{"architecture":"SCMP_ARCH_X86_64","subArchitectures":["SCMP_ARCH_X86"]},{"architecture":"SCMP_ARCH_AARCH64"}],
			"syscalls":[{"name":"reboot","action":"SCMP_ACT_ERRNO"},{"names":["mount"],"action":"SCMP_ACT_ERRNO","excludes":{"caps":["CAP_SYS_ADMIN"]}}]}`,
		"empty.json": `{}`,
		"bad.json":   `{"defaultAction":`,
	}
	for name, body := range profiles {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	load := func(name string) (*specs.LinuxSeccomp, error) {
		in := base()
		in.Container.Security.Seccomp = runtime.SeccompProfile{Type: runtime.SeccompLocalhost, Path: filepath.Join(dir, name)}
		s, err := Build(in)
		if err != nil {
			return nil, err
		}
		return s.Linux.Seccomp, nil
	}
	p, err := load("oci.json")
	if err != nil || p.DefaultAction != specs.ActLog || len(p.Syscalls) != 1 || p.Syscalls[0].Names[0] != "mkdir" {
		t.Errorf("OCI profile: %+v, %v", p, err)
	}
	p, err = load("docker.json")
	if err != nil || p.DefaultAction != specs.ActAllow || len(p.Syscalls) != 2 {
		t.Errorf("Docker profile: %+v, %v; want reboot and mount refused (no CAP_SYS_ADMIN)", p, err)
	}
	if err == nil && goruntime.GOARCH == "amd64" && !reflect.DeepEqual(p.Architectures, []specs.Arch{specs.ArchX86_64, specs.ArchX86}) {
		t.Errorf("Docker profile's architectures: %v; want this one's from the archMap", p.Architectures)
	}
	if p, err := load("empty.json"); err != nil || p != nil {
		t.Errorf("empty profile: %+v, %v; want no filter, as Docker reads it", p, err)
	}
	for _, name := range []string{"bad.json", "missing.json"} {
		if _, err := load(name); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
