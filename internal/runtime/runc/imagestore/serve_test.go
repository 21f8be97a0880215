package imagestore

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/runlet/runlet/internal/polltest"
)

// TestLoadThroughTheHoldersSocket: while one process holds the store, a
// load from another reaches it through the store's socket, and the images
// are there at once; once it stops serving, nothing answers.
func TestLoadThroughTheHoldersSocket(t *testing.T) {
	app, _ := twoImages(t)
	archive := writeArchive(t, map[string]v1.Image{"app:1": app})
	root := filepath.Join(t.TempDir(), "store")
	s, _ := openStoreAt(t, root)
	if Serving(root) {
		t.Fatal("a store nobody serves counts as served")
	}
	if _, err := Open(root, Options{}); err == nil {
		t.Fatal("a second process opened the held store")
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx) }()
	polltest.Eventually(t, 10*time.Second, "the store's socket to answer", func() bool { return Serving(root) })
	if fi, err := os.Stat(filepath.Join(root, socketName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket %v, %v; want mode 0600", fi, err)
	}

	names, err := LoadThrough(context.Background(), root, archive)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"docker.io/library/app:1"}; !reflect.DeepEqual(names, want) {
		t.Errorf("LoadThrough = %v; want %v", names, want)
	}
	checkApp(t, s, "app:1")
	plain := filepath.Join(t.TempDir(), "x.tar")
	must(t, os.WriteFile(plain, tarBytes(t, reg("hello", "world")), 0o600))
	if _, err := LoadThrough(context.Background(), root, plain); err == nil {
		t.Error("a plain tar loaded through the socket")
	}
	if left, _ := os.ReadDir(s.tmpDir()); len(left) != 0 {
		t.Errorf("tmp/ holds %d entries after the loads, starting with %s", len(left), left[0].Name())
	}

	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve = %v", err)
	}
	if Serving(root) {
		t.Error("the socket still answers after Serve returned")
	}
}
