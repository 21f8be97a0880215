package runc

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSealedRunc checks the copy that runc takes for one of its own: a
// memfd with exactly the seals runc looks for, that runs as runc does.
func TestSealedRunc(t *testing.T) {
	runc, err := exec.LookPath("runc")
	if err != nil {
		t.Skip("runc is not installed")
	}
	path, f, version, err := sealedRunc(context.Background(), runc)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !strings.HasPrefix(path, "/proc/") {
		t.Errorf("path %q is not the memfd's", path)
	}
	if f.Name() != runc {
		t.Errorf("the copy is named %q in messages, not the host's %q", f.Name(), runc)
	}
	seals, err := unix.FcntlInt(f.Fd(), unix.F_GET_SEALS, 0)
	if err != nil {
		t.Fatal(err)
	}
	if seals != runcSeals {
		t.Errorf("seals %#x, runc skips its copy only for %#x", seals, runcSeals)
	}
	want, _ := exec.Command(runc, "--version").Output()
	got, err := exec.Command(path, "--version").Output()
	if err != nil || string(got) != string(want) {
		t.Errorf("the copy says %q (%v), runc %q", got, err, want)
	}
	if string(version) != string(want) {
		t.Errorf("the version read with the copy's check is %q; runc says %q", version, want)
	}
	if _, err := f.Write([]byte("x")); err == nil {
		t.Error("the sealed copy took a write")
	}
}

// TestSealedRuncRefused: a binary that cannot be read gives an error, on
// which the backend goes on with the path it found.
func TestSealedRuncRefused(t *testing.T) {
	if _, _, _, err := sealedRunc(context.Background(), "/nonexistent/runc"); err == nil {
		t.Fatal("no error for a missing binary")
	}
}
