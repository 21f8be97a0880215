package ocispec

import (
	"os"
	"strings"
	"testing"
)

func TestBoundingSet(t *testing.T) {
	caps, err := BoundingSet()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile("/proc/self/status")
	if strings.Contains(string(b), "CapBnd:\t0000000000000000") != (len(caps) == 0) {
		t.Errorf("bounding set %v disagrees with /proc/self/status", caps)
	}
}

// TestHostDevices: the host's character devices are found, the
// directories mounted afresh in a container are not walked.
func TestHostDevices(t *testing.T) {
	devs, err := HostDevices()
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, d := range devs {
		if d.Path == "/dev/null" {
			found = d.Type == "c" && d.Major == 1 && d.Minor == 3 && d.FileMode != nil && d.UID != nil
		}
		if strings.HasPrefix(d.Path, "/dev/pts/") || strings.HasPrefix(d.Path, "/dev/shm/") || d.Path == "/dev/console" {
			t.Errorf("device %s should be left to the container's own", d.Path)
		}
	}
	if !found {
		t.Errorf("/dev/null not found as a character device 1:3 in %d devices", len(devs))
	}
	if _, ok := deviceAt("/dev"); ok {
		t.Error("a directory taken for a device")
	}
}
