package runc

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runc/imagestore"
	"github.com/runlet/runlet/internal/runtime/runtimetest"
)

// TestConformance runs the backend suite against real runc and conmon.
// Its instances share one root and one image store, as a restarted
// runlet's do, with an owner each.
func TestConformance(t *testing.T) {
	root := testRoot(t)
	store, err := imagestore.Open(filepath.Join(root, "images"), imagestore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	run := testRunDir(t)
	runtimetest.Run(t, func(t *testing.T, owner string) runtime.Runtime {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		b, err := Open(ctx, Options{Root: root, RunDir: run, Owner: owner, Images: store, Logf: t.Logf})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { _ = b.Close() })
		return b
	})
}

// testRunDir is a RunDir of the test's own, in /run as the default is.
func testRunDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/run", "rl-runc-run-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// testRoot is a root for a test, or a skip where runc cannot run.
func testRoot(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the runc backend needs root")
	}
	for _, bin := range []string{"runc", "conmon"} {
		if _, err := findBinary("", bin, "/usr/sbin/"+bin, "/usr/libexec/podman/"+bin); err != nil {
			if testing.Short() {
				t.Skipf("%v (-short)", err)
			}
			t.Fatal(err)
		}
	}
	dir, err := os.MkdirTemp("", "rl-runc-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
