package podman

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime/runtimetest"
)

// TestConformance runs the backend suite against a real podman service that
// the backend starts on a private socket and stops at the end.
func TestConformance(t *testing.T) {
	b := realBackend(t)
	runtimetest.Run(t, b)
}

// realBackend starts a backend on a private podman service for the test.
// Without podman the test fails (CI installs it) unless -short is given.
func realBackend(t testing.TB) *Backend {
	t.Helper()
	if _, err := exec.LookPath("podman"); err != nil {
		if testing.Short() {
			t.Skip("podman is not installed (-short)")
		}
		t.Fatalf("podman is not installed: the podman backend tests need it (apt-get install podman runc busybox-static), or run with -short")
	}
	ensureTestImage(t)
	// Generous: a loaded machine can hold podman's storage lock for long.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b, err := New(ctx, Options{PrivateService: true, RunDir: shortTempDir(t), Logf: t.Logf})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

// shortTempDir keeps the socket path under the 108-byte unix limit, which
// t.TempDir() of a long test name can exceed.
func shortTempDir(t testing.TB) string {
	dir, err := os.MkdirTemp("", "runlet-pt-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// ensureTestImage builds the test image with hack/images.sh when missing.
func ensureTestImage(t testing.TB) {
	t.Helper()
	if exec.Command("podman", "image", "exists", runtimetest.Image).Run() == nil {
		return
	}
	root := repoRoot(t)
	out, err := exec.Command(filepath.Join(root, "hack", "images.sh")).CombinedOutput()
	if err != nil {
		t.Fatalf("building %s with hack/images.sh: %v\n%s", runtimetest.Image, err, out)
	}
}

func repoRoot(t testing.TB) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test's directory")
		}
		dir = parent
	}
}
