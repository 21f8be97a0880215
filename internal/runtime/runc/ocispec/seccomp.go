package ocispec

import (
	"fmt"
	"os"

	"github.com/moby/profiles/seccomp"
	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/runlet/runlet/internal/runtime"
)

// setSeccomp sets the container's seccomp filter. The default profile and
// a Localhost one are both resolved against the process's capabilities
// (rules such as "allow mount with CAP_SYS_ADMIN"), the architecture and
// the kernel, so the capabilities must be set first. A privileged
// container runs without a filter, as on containerd and podman.
func setSeccomp(s *specs.Spec, in Input) error {
	sec := in.Container.Security
	if sec.Privileged {
		return nil
	}
	var (
		p   *specs.LinuxSeccomp
		err error
	)
	switch sec.Seccomp.Type {
	case runtime.SeccompRuntimeDefault:
		p, err = seccomp.GetDefaultProfile(s)
	case runtime.SeccompUnconfined:
		return nil
	case runtime.SeccompLocalhost:
		p, err = localhostProfile(sec.Seccomp.Path, s)
	default:
		err = fmt.Errorf("unknown seccomp profile type %q", sec.Seccomp.Type)
	}
	if err != nil {
		return fmt.Errorf("seccomp: %w", err)
	}
	s.Linux.Seccomp = p
	return nil
}

// localhostProfile reads a profile in Docker's format, of which the OCI
// format is a subset. A profile without a default action or rules is no
// filter, as Docker reads it.
func localhostProfile(path string, s *specs.Spec) (*specs.LinuxSeccomp, error) {
	body, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the Localhost profile: %w", err)
	}
	p, err := seccomp.LoadProfile(string(body), s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}
