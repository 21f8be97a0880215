package imagestore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/runlet/runlet/internal/runtime"
)

func TestReopenKeepsImagesAndLastUse(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	s, clock := openStoreAt(t, root)
	app, tool := twoImages(t)
	ctx := context.Background()
	if _, err := s.add(ctx, app, []string{"example.com/app:1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.add(ctx, tool, []string{"example.com/tool:1"}); err != nil {
		t.Fatal(err)
	}
	clock.advance(time.Hour)
	s.MarkUsed("example.com/app:1")
	before := s.Images()
	must(t, s.Close())

	s2, _ := openStoreAt(t, root)
	if after := s2.Images(); !reflect.DeepEqual(after, before) {
		t.Errorf("after a restart:\n%+v\nwant\n%+v", after, before)
	}
	if im, _ := s2.Image("example.com/app:1"); !im.LastUsed.Equal(clock.now()) {
		t.Errorf("app last used %v; want %v", im.LastUsed, clock.now())
	}
	checkApp(t, s2, "example.com/app:1")
	if id, err := s2.EnsureImage(ctx, digestOf(t, tool), runtime.PullNever, nil); err != nil || id != digestOf(t, tool) {
		t.Errorf("EnsureImage by ID = %s, %v", id, err)
	}
}

func TestOpenTidiesWhatACrashLeft(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	s, _ := openStoreAt(t, root)
	ctx := context.Background()
	keep := imageOf(t, v1.Config{}, layerOf(t, reg2("keep")))
	lose := imageOf(t, v1.Config{}, layerOf(t, reg2("lose")))
	for n, img := range map[string]v1.Image{"example.com/keep:1": keep, "example.com/lose:1": lose} {
		if _, err := s.add(ctx, img, []string{n}); err != nil {
			t.Fatal(err)
		}
	}
	lost, _ := s.Image("example.com/lose:1")
	must(t, s.Close())
	// A half unpack, a layer renamed in but never recorded, a layer gone.
	must(t, os.MkdirAll(filepath.Join(root, "tmp", "layer-123", "usr"), 0o755))
	stray := filepath.Join(root, "layers", strings.Repeat("ab", 32))
	must(t, os.MkdirAll(stray, 0o755))
	must(t, os.RemoveAll(lost.LayerDirs[0]))

	s2, _ := openStoreAt(t, root)
	if got := entriesUnder(t, filepath.Join(root, "tmp")); len(got) != 0 {
		t.Errorf("tmp/ holds %v", got)
	}
	if _, err := os.Stat(stray); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the unrecorded layer is still there: %v", err)
	}
	if _, err := s2.EnsureImage(ctx, "example.com/lose:1", runtime.PullNever, nil); !errors.Is(err, runtime.ErrImageNotFound) {
		t.Errorf("the image whose layer is gone: %v; want ErrImageNotFound", err)
	}
	if _, err := s2.EnsureImage(ctx, "example.com/keep:1", runtime.PullNever, nil); err != nil {
		t.Errorf("the whole image: %v", err)
	}
	if n := len(s2.Images()); n != 1 {
		t.Errorf("%d images after the tidy; want 1", n)
	}
}

func TestOneProcessAtATime(t *testing.T) {
	root := filepath.Join(t.TempDir(), "store")
	s, _ := openStoreAt(t, root)
	if _, err := Open(root, Options{}); err == nil {
		t.Fatal("a second Open of the same root succeeded")
	}
	must(t, s.Close())
	s2, err := Open(root, Options{})
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	must(t, s2.Close())
}

func TestImageOfAMissingImage(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	if _, err := s.ImageUser(ctx, "nothing:1"); !errors.Is(err, runtime.ErrImageNotFound) || !strings.Contains(err.Error(), "nothing:1") {
		t.Errorf("ImageUser = %v; want ErrImageNotFound naming the image", err)
	}
	if _, err := s.ImageSize(ctx, "sha256:"+strings.Repeat("0", 64)); !errors.Is(err, runtime.ErrImageNotFound) {
		t.Errorf("ImageSize = %v; want ErrImageNotFound", err)
	}
}
