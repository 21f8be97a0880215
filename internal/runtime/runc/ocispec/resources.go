package ocispec

import (
	"slices"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/runlet/runlet/internal/runtime/cgroups"
)

// setResources sets the container's cgroup: its limits, as the podman
// backend asks podman for them (cgroups.Resources), and its devices.
func setResources(s *specs.Spec, in Input) error {
	r := cgroups.Resources(in.Container.Resources, in.Host.Cgroups, true)
	if r == nil {
		r = &specs.LinuxResources{}
	}
	r.Devices = deviceRules(in.Container.Security.Privileged)
	if in.Container.Security.Privileged {
		s.Linux.Devices = slices.Clone(in.Host.Devices)
	}
	s.Linux.Resources = r
	return nil
}

// deviceRules deny every device but those runc allows every container
// (null, zero, full, tty, random, urandom, ptmx, pts), which runc appends;
// a privileged container may use all of them, as on containerd.
func deviceRules(privileged bool) []specs.LinuxDeviceCgroup {
	return []specs.LinuxDeviceCgroup{{Allow: privileged, Access: "rwm"}}
}
