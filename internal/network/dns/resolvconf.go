package dns

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ResolvConf is the file a container runtime writes for the config, in
// containerd's CRI format (parseDNSOptions): search, then nameservers, then
// options. An empty config gives nil: the runtime then copies the node's
// /etc/resolv.conf as it is.
func ResolvConf(c *Config) []byte {
	var b strings.Builder
	if len(c.Searches) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(c.Searches, " "))
	}
	if len(c.Servers) > 0 {
		fmt.Fprintf(&b, "nameserver %s\n", strings.Join(c.Servers, "\nnameserver "))
	}
	if len(c.Options) > 0 {
		fmt.Fprintf(&b, "options %s\n", strings.Join(c.Options, " "))
	}
	if b.Len() == 0 {
		return nil
	}
	return []byte(b.String())
}

// HostResolvConf is what a runtime copies when the config is empty.
const HostResolvConf = "/etc/resolv.conf"

// WriteResolvConf writes the pod's resolv.conf at path, mode 0644, in place
// as containerd does (a container bind-mounting it sees the same inode).
func WriteResolvConf(path string, c *Config) error {
	content := ResolvConf(c)
	if content == nil {
		b, err := os.ReadFile(HostResolvConf)
		if err != nil {
			return err
		}
		content = b
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return err
	}
	if err := os.WriteFile(path, content, 0o644); err != nil {
		return err
	}
	return os.Chmod(path, 0o644)
}
