package podman

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runtimetest"
	"golang.org/x/sys/unix"
)

// TestConformance runs the backend suite against a real podman service that
// a backend starts on a private socket and stops at the end; the suite's
// instances are backends for their owners on that service.
func TestConformance(t *testing.T) {
	svc := realBackend(t)
	userns, err := os.MkdirTemp("/run", "rl-podman-userns-") // in /run, as the default is
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = unix.Unmount(userns, unix.MNT_DETACH) // the backend made it a shared mount
		_ = os.RemoveAll(userns)
	})
	runtimetest.Run(t, func(t *testing.T, owner string) runtime.Runtime {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		b, err := New(ctx, Options{Socket: svc.Client().Socket(), Owner: owner, UserNSDir: userns, Logf: t.Logf})
		if err != nil {
			t.Fatalf("New on the service's socket: %v", err)
		}
		t.Cleanup(func() { _ = b.Close() })
		return b
	})
}

// testSandbox is a test pod's sandbox config, labelled as the core labels one.
func testSandbox(uid, name string) runtime.SandboxConfig {
	return runtime.SandboxConfig{PodUID: uid, Namespace: runtimetest.Namespace, Name: name,
		Labels: runtime.PodLabels(uid, runtimetest.Namespace, name)}
}

// testContainer is a config for a container of sb running cmd in the test
// image, labelled as the core labels one.
func testContainer(sb runtime.Sandbox, name string, cmd ...string) runtime.ContainerConfig {
	return runtime.ContainerConfig{Name: name, Image: runtimetest.Image, Command: cmd,
		Labels: runtime.ContainerLabels(runtime.PodLabels(sb.PodUID, sb.Namespace, sb.Name), name, 0)}
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
	runtimetest.LoadFixture(t, b)
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
