package pause

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

// privateBinary copies the test binary, which pauseproc takes over as
// runlet-pause's main would, into a directory only root can search.
func privateBinary(t *testing.T) *Binary {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "private")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, BinaryName)
	copyFile(t, self, path)
	b, err := OpenBinary(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	if b.Own || b.Name() != path {
		t.Fatalf("OpenBinary(%q): name %q, own %v", path, b.Name(), b.Own)
	}
	return b
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err == nil {
		err = os.WriteFile(to, b, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// A pod in a user namespace of its own runs the program through its file
// descriptor: the namespace's root cannot reach the program's directory.
// The process is named runlet-pause and keeps no file of runlet's open.
func TestPauseRunsTheBinary(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("new namespaces need root")
	}
	b := privateBinary(t)
	ids := []runtime.IDMapping{{ContainerID: 0, HostID: 2000000, Length: 65536}}
	for _, userNS := range []*runtime.UserNamespace{nil, {UIDs: ids, GIDs: ids}} {
		p, err := Start(Config{Namespaces: Namespaces{UTS: true, IPC: true, PID: true}, Hostname: "pod-c", UserNS: userNS, Binary: b})
		if err != nil {
			t.Fatalf("user namespace %v: %v", userNS != nil, err)
		}
		t.Cleanup(func() { _ = p.Kill(5 * time.Second) })
		proc := "/proc/" + strconv.Itoa(p.PID)
		if comm, _ := os.ReadFile(proc + "/comm"); strings.TrimSpace(string(comm)) != BinaryName {
			t.Errorf("user namespace %v: comm %q; want %s", userNS != nil, comm, BinaryName)
		}
		fds, _ := os.ReadDir(proc + "/fd")
		for _, fd := range fds {
			if target, _ := os.Readlink(proc + "/fd/" + fd.Name()); target == b.Name() {
				t.Errorf("user namespace %v: fd %s is still the program %s", userNS != nil, fd.Name(), target)
			}
		}
		if exe, _ := os.Readlink(proc + "/exe"); exe != b.Name() {
			t.Errorf("user namespace %v: runs %q; want %s", userNS != nil, exe, b.Name())
		}
	}
}

// Without runlet-pause beside the binary or in PATH, runlet's own binary
// (here the test binary, which pauseproc takes over too) is the program.
func TestPauseWithoutTheProgram(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("new namespaces need root")
	}
	t.Setenv("PATH", t.TempDir())
	b, err := OpenBinary("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	if !b.Own {
		t.Fatalf("OpenBinary found %s; want runlet's own binary", b.Name())
	}
	p, err := Start(Config{Namespaces: Namespaces{UTS: true}, Hostname: "pod-d", Binary: b})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Kill(5 * time.Second) })
	self, _ := os.Executable()
	if exe, _ := os.Readlink("/proc/" + strconv.Itoa(p.PID) + "/exe"); exe != self {
		t.Errorf("runs %q; want runlet's own binary %s", exe, self)
	}
}
