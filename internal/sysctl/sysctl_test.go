package sysctl

import (
	"slices"
	"testing"
)

func TestSafeSysctlsFollowTheKernel(t *testing.T) {
	if got := SafeSysctlAllowlist("6.18.44-fc-v669"); len(got) != len(safeSysctls) {
		t.Errorf("a 6.18 kernel: %v; want all %d", got, len(safeSysctls))
	}
	old := SafeSysctlAllowlist("4.5.0")
	if slices.Contains(old, "net.ipv4.tcp_rmem") || !slices.Contains(old, "net.ipv4.tcp_keepalive_time") || !slices.Contains(old, "kernel.shm_rmid_forced") {
		t.Errorf("a 4.5 kernel: %v", old)
	}
	if got := SafeSysctlAllowlist(""); len(got) != 5 {
		t.Errorf("unknown kernel: %v; want the five every kernel has", got)
	}
}

func TestAllowlistPatterns(t *testing.T) {
	for _, bad := range []string{"foo-", "kernel.msg**", "vm.swappiness", "net.*.x"} {
		if _, err := NewAllowlist("", []string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := NewAllowlist("", []string{"kernel.msg*", "net.core.somaxconn", "fs.mqueue.*"}); err != nil {
		t.Error(err)
	}
}
