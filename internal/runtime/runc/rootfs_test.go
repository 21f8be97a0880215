package runc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runlet/runlet/internal/unmount"
	"golang.org/x/sys/unix"
)

// TestRootfsOnAnOverlay: where the kernel refuses an overlay (its upper
// directory on an overlay, as when runlet's root is inside a container), a
// container's root is mounted with fuse-overlayfs: the image's files show,
// writes land in the container's own layer, and an unmount ends it.
func TestRootfsOnAnOverlay(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounts need root")
	}
	if _, err := exec.LookPath("fuse-overlayfs"); err != nil {
		t.Skip("fuse-overlayfs is not installed")
	}
	dir := t.TempDir()
	base, top := filepath.Join(dir, "base"), filepath.Join(dir, "top")
	outer := filepath.Join(dir, "outer")
	for _, d := range []string{base, top, outer, filepath.Join(dir, "u"), filepath.Join(dir, "w")} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(base, "a"), []byte("base"), 0o644))
	must(t, os.WriteFile(filepath.Join(top, "b"), []byte("top"), 0o644))
	// The bundle lives on an overlay: the kernel refuses it as upper dir.
	must(t, unix.Mount("overlay", outer, "overlay", 0,
		"lowerdir="+base+",upperdir="+filepath.Join(dir, "u")+",workdir="+filepath.Join(dir, "w")))
	t.Cleanup(func() { _ = unix.Unmount(outer, unix.MNT_DETACH) })
	bundle := filepath.Join(outer, "bundle")

	if err := mountRootfs(bundle, filepath.Join(bundle, "rootfs"), []string{base, top}); err != nil {
		t.Fatal(err)
	}
	rootfs := filepath.Join(bundle, "rootfs")
	t.Cleanup(func() { _ = unmount.Detach(rootfs) })
	if typ := mountType(t, rootfs); typ != "fuse.fuse-overlayfs" {
		t.Errorf("the root is mounted as %q; want fuse-overlayfs", typ)
	}
	for name, want := range map[string]string{"a": "base", "b": "top"} {
		if got, err := os.ReadFile(filepath.Join(rootfs, name)); err != nil || string(got) != want {
			t.Errorf("%s in the root = %q, %v; want %q", name, got, err, want)
		}
	}
	must(t, os.WriteFile(filepath.Join(rootfs, "c"), []byte("mine"), 0o644))
	if got, err := os.ReadFile(filepath.Join(bundle, "upper", "c")); err != nil || string(got) != "mine" {
		t.Errorf("a write went to %q, %v; want it in the container's upper layer", got, err)
	}
	if _, err := os.Stat(filepath.Join(top, "c")); err == nil {
		t.Error("a write reached the image's layer")
	}
	if err := unmount.Detach(rootfs); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(rootfs, "a")); err == nil {
		t.Error("the root is still mounted")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// mountType is the filesystem type mounted at path, from mountinfo.
func mountType(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	typ := ""
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		for i, x := range f {
			if x == "-" && len(f) > 4 && f[4] == path && i+1 < len(f) {
				typ = f[i+1] // the last mount there is the one seen
			}
		}
	}
	return typ
}
