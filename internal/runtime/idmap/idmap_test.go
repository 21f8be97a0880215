package idmap

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// hostRange is where the test's user namespace maps its root.
const hostRange = 1 << 30

// userNS starts a process in a user namespace mapping 0 to hostRange and
// returns that namespace.
func userNS(t *testing.T) *os.File {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("idmapped mounts need root")
	}
	one := []syscall.SysProcIDMap{{ContainerID: 0, HostID: hostRange, Size: 65536}}
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER, UidMappings: one, GidMappings: one}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	f, err := os.Open(filepath.Join("/proc", strconv.Itoa(cmd.Process.Pid), "ns", "user"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestClonesShowRootAsThePods: through a clone, root's files are the
// namespace's root's, and a clone of a file is a file.
func TestClonesShowRootAsThePods(t *testing.T) {
	ns := userNS(t)
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mounts := []clone{{source: src}, {source: filepath.Join(src, "f")}}
	for i, m := range mounts {
		target := filepath.Join(dir, "m", strconv.Itoa(i))
		if err := Clone(m.source, target, ns); err != nil {
			t.Fatal(err)
		}
		mounts[i].target = target
	}
	t.Cleanup(func() { _ = Unmount(dir, []string{mounts[0].target, mounts[1].target}) })
	for _, p := range []string{filepath.Join(mounts[0].target, "f"), mounts[1].target} {
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		if st.Uid != hostRange || st.Gid != hostRange {
			t.Errorf("%s is owned by %d:%d on the host through the clone; want %d:%d", p, st.Uid, st.Gid, hostRange, hostRange)
		}
	}
	if err := Unmount(dir, []string{mounts[0].target, mounts[1].target}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the clones' directory is still there: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(src, "f")); err != nil || string(b) != "x" {
		t.Errorf("the source after the clones went: %q, %v", b, err)
	}
}

// clone is one of the test's clones.
type clone struct{ source, target string }

// TestRemoveMountPointsSparesMounts: a mount still attached, and what is
// below it, survive the removal.
func TestRemoveMountPointsSparesMounts(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount")
	}
	dir := t.TempDir()
	point := filepath.Join(dir, "m", "0")
	if err := os.MkdirAll(point, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", point, "tmpfs", 0, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Unmount(point, unix.MNT_DETACH) })
	if err := os.WriteFile(filepath.Join(point, "data"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := RemoveMountPoints(dir, 2); err == nil {
		t.Error("no error with a mount still attached")
	}
	if b, err := os.ReadFile(filepath.Join(point, "data")); err != nil || string(b) != "keep" {
		t.Errorf("the mount's file: %q, %v; want it kept", b, err)
	}
}

// TestOpenDir: the directories from run down are opened for search; a
// closed one above run is named.
func TestOpenDir(t *testing.T) {
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	run := filepath.Join(base, "run")
	if err := os.Mkdir(run, 0o700); err != nil {
		t.Fatal(err)
	}
	dir, err := OpenDir(run, "c1")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{run, dir} {
		if st, _ := os.Stat(d); st.Mode().Perm()&0o001 == 0 {
			t.Errorf("%s is %o; want it searchable by others", d, st.Mode().Perm())
		}
	}
	if err := os.Chmod(base, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenDir(run, "c2"); err == nil || !strings.Contains(err.Error(), base+" is closed") {
		t.Errorf("OpenDir below a closed directory: %v; want it named", err)
	}
}
