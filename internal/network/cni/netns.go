package cni

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/runlet/runlet/internal/netns"
)

// setSysctls writes net.* sysctls inside the namespace at path: /proc/sys/net
// is the namespace of the thread that opens it.
func setSysctls(path string, sysctls map[string]string) error {
	if len(sysctls) == 0 {
		return nil
	}
	return netns.Do(path, func() error {
		for name, value := range sysctls {
			file := filepath.Join("/proc/sys", strings.ReplaceAll(name, ".", "/"))
			if err := os.WriteFile(file, []byte(value), 0o644); err != nil {
				return fmt.Errorf("sysctl %s=%s: %w", name, value, err)
			}
		}
		return nil
	})
}
