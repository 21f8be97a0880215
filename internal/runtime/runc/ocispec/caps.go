package ocispec

import (
	"fmt"
	"slices"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/runlet/runlet/internal/runtime"
)

// defaultCaps are podman's default capabilities (containers.conf), which
// the podman backend's containers get: a pod keeps the same privileges
// whichever backend runs it. containerd grants NET_RAW, MKNOD and
// AUDIT_WRITE on top; podman dropped them for being rarely needed and
// often abused.
var defaultCaps = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_KILL",
	"CAP_NET_BIND_SERVICE", "CAP_SETFCAP", "CAP_SETGID", "CAP_SETPCAP",
	"CAP_SETUID", "CAP_SYS_CHROOT",
}

// allCaps are the capabilities Linux knows, in bit order (up to
// CAP_CHECKPOINT_RESTORE, 5.9).
var allCaps = []string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER",
	"CAP_FSETID", "CAP_KILL", "CAP_SETGID", "CAP_SETUID", "CAP_SETPCAP",
	"CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST",
	"CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER",
	"CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE",
	"CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
	"CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD",
	"CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP",
	"CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM",
	"CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
}

// capabilities are the process's bounding, effective and permitted sets
// (a non-root user's exec clears the last two, as everywhere); inheritable
// and ambient stay empty, as containerd leaves them since CVE-2022-24769.
//
// As containerd's CRI: a privileged container has every capability; "ALL"
// in CapAdd starts from every one and in CapDrop from none, then the named
// ones are added, then dropped. "Every" means those the host has: runc
// cannot grant what it lacks (this host has no CAP_SYS_RESOURCE: "unable to
// apply caps"). An added capability the host lacks is an error here rather
// than a failed start, and so is an unknown name, which podman refuses too
// (runc would drop it with a warning).
func capabilities(s runtime.SecurityConfig, host []string) (*specs.LinuxCapabilities, error) {
	if host == nil {
		host = allCaps
	}
	set := allCaps
	if !s.Privileged {
		set = capSet(s.CapAdd, s.CapDrop)
		if err := checkAdded(set, s.CapAdd, host); err != nil {
			return nil, err
		}
	}
	set = hostHas(set, host)
	return &specs.LinuxCapabilities{Bounding: set, Effective: slices.Clone(set), Permitted: slices.Clone(set)}, nil
}

// capSet applies CapAdd and CapDrop to the default set.
func capSet(add, drop []string) []string {
	set := slices.Clone(defaultCaps)
	if slices.Contains(add, "ALL") {
		set = slices.Clone(allCaps)
	}
	if slices.Contains(drop, "ALL") {
		set = nil
	}
	for _, c := range add {
		if c != "ALL" && !slices.Contains(set, c) {
			set = append(set, c)
		}
	}
	return slices.DeleteFunc(set, func(c string) bool { return slices.Contains(drop, c) })
}

// checkAdded refuses a capability added by name that no kernel knows or
// that the host lacks; a default one the host lacks just goes.
func checkAdded(set, add, host []string) error {
	for _, c := range set {
		if !slices.Contains(add, c) {
			continue
		}
		if !slices.Contains(allCaps, c) {
			return fmt.Errorf("unknown capability %s", c)
		}
		if !slices.Contains(host, c) {
			return fmt.Errorf("capability %s is not available on this host", c)
		}
	}
	return nil
}

// hostHas keeps the capabilities the host has; a set is never nil, so that
// the spec says "none" rather than leaving it to runc.
func hostHas(set, host []string) []string {
	out := []string{}
	for _, c := range set {
		if slices.Contains(host, c) {
			out = append(out, c)
		}
	}
	return out
}
