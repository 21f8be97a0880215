package unmount

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

func TestDetach(t *testing.T) {
	dir := t.TempDir()
	if err := Detach(dir); err != nil {
		t.Errorf("not a mount point: %v; want no error", err)
	}
	if err := Detach(filepath.Join(dir, "gone")); err != nil {
		t.Errorf("gone: %v; want no error", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting needs root")
	}
	target := filepath.Join(dir, "m")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", target, "tmpfs", 0, ""); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(target, "in-the-mount")
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Detach(target); err != nil {
		t.Fatalf("mounted: %v", err)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("the mount's file is still there after Detach (%v)", err)
	}
}
