package netns

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/runlet/runlet/internal/netns/loopback"

	"golang.org/x/sys/unix"
)

func inode(t *testing.T, path string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// TestPinDoRemove: a pinned namespace is a namespace of its own, code runs
// inside it, every thread of the process is back in runlet's namespace
// afterwards, and the pin goes without a trace.
func TestPinDoRemove(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root")
	}
	dir := filepath.Join(t.TempDir(), "netns")
	if err := EnsureSharedDir(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	path := filepath.Join(dir, "pod")
	if err := Pin(path); err != nil {
		t.Fatal(err)
	}
	own := inode(t, "/proc/self/ns/net")
	if !IsPinned(path) || inode(t, path) == own {
		t.Fatalf("%s: pinned %v, same namespace as runlet's: %v", path, IsPinned(path), inode(t, path) == own)
	}
	var inside uint64
	if err := Do(path, func() error { inside = inode(t, "/proc/thread-self/ns/net"); return nil }); err != nil {
		t.Fatal(err)
	}
	if inside != inode(t, path) {
		t.Errorf("Do ran in namespace %d; want the pinned %d", inside, inode(t, path))
	}
	tasks, _ := filepath.Glob("/proc/self/task/*/ns/net")
	for _, task := range tasks {
		if inode(t, task) != own {
			t.Errorf("%s is not in runlet's namespace after Do", task)
		}
	}
	if err := Remove(path); err != nil {
		t.Fatal(err)
	}
	if IsPinned(path) {
		t.Error("still pinned after Remove")
	}
	if err := Remove(path); err != nil {
		t.Errorf("a second Remove: %v", err)
	}
	if err := Do(path, func() error { return nil }); !errors.Is(err, unix.ENOENT) {
		t.Errorf("Do in a namespace that is gone: %v; want ENOENT, which port-forward falls back on", err)
	}
}

func TestAddressesOfLoopback(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	path := filepath.Join(t.TempDir(), "ns")
	if err := Pin(path); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = Remove(path) })
	if err := Do(path, loopback.Up); err != nil {
		t.Fatal(err)
	}
	ips, err := Addresses(path, "lo")
	if err != nil || len(ips) == 0 || ips[0] != "127.0.0.1" {
		t.Errorf("Addresses of lo = %v, %v; want 127.0.0.1 first", ips, err)
	}
	if _, err := Addresses(path, "eth0"); err == nil {
		t.Error("Addresses of an interface the namespace lacks: no error")
	}
}
