package ocispec

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// BoundingSet reads the calling process's capability bounding set, which
// runc, started by it, inherits: Host.Capabilities.
func BoundingSet() ([]string, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapBnd:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				return nil, fmt.Errorf("CapBnd %q: %w", v, err)
			}
			return capNames(mask), nil
		}
	}
	return nil, fmt.Errorf("/proc/self/status has no CapBnd")
}

// capNames are the capabilities set in a mask, bit n being allCaps[n].
func capNames(mask uint64) []string {
	var out []string
	for bit, name := range allCaps {
		if mask&(1<<bit) != 0 {
			out = append(out, name)
		}
	}
	return out
}

// skipDevDirs hold no devices a container should get, or are mounted
// afresh in it (containerd's oci.HostDevices skips the same).
var skipDevDirs = map[string]bool{"pts": true, "shm": true, "fd": true, "mqueue": true, ".lxc": true, ".lxd-mounts": true, ".udev": true}

// HostDevices lists the host's device nodes below /dev for privileged
// containers: Host.Devices.
func HostDevices() ([]specs.LinuxDevice, error) {
	return devicesIn("/dev")
}

func devicesIn(root string) ([]specs.LinuxDevice, error) {
	var out []specs.LinuxDevice
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && skipDevDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if path == filepath.Join(root, "console") {
			return nil // the container's console is its own
		}
		if dev, ok := deviceAt(path); ok {
			out = append(out, dev)
		}
		return nil
	})
	return out, err
}

// deviceAt describes a character or block device; anything else is not one.
func deviceAt(path string) (specs.LinuxDevice, bool) {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil {
		return specs.LinuxDevice{}, false
	}
	var typ string
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFCHR:
		typ = "c"
	case unix.S_IFBLK:
		typ = "b"
	default:
		return specs.LinuxDevice{}, false
	}
	mode, uid, gid := os.FileMode(st.Mode&0o777), st.Uid, st.Gid
	return specs.LinuxDevice{
		Path: path, Type: typ, Major: int64(unix.Major(st.Rdev)), Minor: int64(unix.Minor(st.Rdev)),
		FileMode: &mode, UID: &uid, GID: &gid,
	}, true
}
