package node

import (
	"os"
	"strings"
)

// AppArmorEnabled is libcontainer's apparmor.IsEnabled, as the kubelet
// checks the host: the securityfs entry exists and the module is on.
func AppArmorEnabled() bool {
	if _, err := os.Stat("/sys/kernel/security/apparmor"); err != nil {
		return false
	}
	b, err := os.ReadFile("/sys/module/apparmor/parameters/enabled")
	return err == nil && strings.HasPrefix(string(b), "Y")
}

// SELinuxEnabled reports an SELinux filesystem mounted where the runtimes
// look for it: without it, labels are not applied.
func SELinuxEnabled() bool {
	_, err := os.Stat("/sys/fs/selinux/enforce")
	return err == nil
}
