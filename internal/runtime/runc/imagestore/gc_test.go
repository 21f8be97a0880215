package imagestore

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// gcFixture holds images a (100 bytes), b (200) and c (300), each of its
// own layer, used in that order, on a disk of 1000 bytes of which avail
// are free.
func gcFixture(t *testing.T, avail uint64) (*Store, *fakeClock, map[string]string) {
	t.Helper()
	s, clock := openStore(t)
	s.usage = func(string) (uint64, uint64, error) { return 1000, avail, nil }
	ids := map[string]string{}
	for _, n := range []string{"a", "b", "c"} {
		size := map[string]int{"a": 100, "b": 200, "c": 300}[n]
		img := imageOf(t, v1.Config{}, layerOf(t, reg(n, strings.Repeat(n, size))))
		id, err := s.add(context.Background(), img, []string{"example.com/" + n + ":1"})
		if err != nil {
			t.Fatal(err)
		}
		ids[n] = id
		clock.advance(time.Minute)
	}
	return s, clock, ids
}

// names are the images' names the store holds, as their letters.
func names(s *Store) []string {
	var out []string
	for _, im := range s.Images() {
		for _, n := range im.Names {
			out = append(out, strings.TrimSuffix(strings.TrimPrefix(n, "example.com/"), ":1"))
		}
	}
	return out
}

func none(string) bool { return false }

func TestGCBelowHighKeepsImages(t *testing.T) {
	s, _, _ := gcFixture(t, 500) // 50% used
	must(t, s.GC(context.Background(), none, 85, 80))
	if got := names(s); len(got) != 3 {
		t.Errorf("images after GC = %v; want all three", got)
	}
}

func TestGCRemovesLeastRecentlyUsedUntilLow(t *testing.T) {
	s, _, _ := gcFixture(t, 0)
	// 100% used; low 75 wants 250 bytes free: a (100) and b (200) go, c stays.
	must(t, s.GC(context.Background(), none, 85, 75))
	if got := names(s); !reflect.DeepEqual(got, []string{"c"}) {
		t.Errorf("images after GC = %v; want [c]", got)
	}
	if n := len(entriesUnder(t, filepath.Join(s.root, "layers"))); n != 2 { // c's layer and its file
		t.Errorf("layers/ holds %d entries; want c's layer only", n)
	}
}

func TestGCSkipsImagesInUseAndRecentlyUsed(t *testing.T) {
	s, clock, ids := gcFixture(t, 0)
	s.MarkUsed(ids["a"]) // now a is the most recently used
	inUse := func(id string) bool { return id == ids["b"] }
	// 250 bytes wanted: c (300) goes before a; b is in use.
	must(t, s.GC(context.Background(), inUse, 85, 75))
	if got := names(s); !reflect.DeepEqual(slices.Sorted(slices.Values(got)), []string{"a", "b"}) {
		t.Errorf("images after GC = %v; want [a b]", got)
	}

	s.opts.MinAge = time.Hour
	clock.advance(time.Minute)
	err := s.GC(context.Background(), inUse, 85, 75)
	if err == nil || !strings.Contains(err.Error(), "wanted to free 250 bytes") {
		t.Errorf("GC with every image in use or young = %v; want it to say it could not free enough", err)
	}
	if got := names(s); len(got) != 2 {
		t.Errorf("images after GC = %v; want a and b kept", got)
	}
}

func TestGCCountsSharedLayersOnce(t *testing.T) {
	s, clock := openStore(t)
	s.usage = func(string) (uint64, uint64, error) { return 1000, 0, nil }
	base := layerOf(t, reg("base", strings.Repeat("x", 400)))
	ctx := context.Background()
	for _, n := range []string{"old", "kept"} {
		img := imageOf(t, v1.Config{}, base, layerOf(t, reg(n, n)))
		if _, err := s.add(ctx, img, []string{"example.com/" + n + ":1"}); err != nil {
			t.Fatal(err)
		}
		clock.advance(time.Minute)
	}
	kept, _ := s.Image("example.com/kept:1")
	// Removing old frees only its own 3 bytes: the base stays for kept,
	// which is in use.
	err := s.GC(ctx, func(id string) bool { return id == kept.ID }, 85, 75)
	if err == nil || !strings.Contains(err.Error(), "only 3 bytes") {
		t.Errorf("GC = %v; want it to have freed 3 bytes", err)
	}
	if got := names(s); !reflect.DeepEqual(got, []string{"kept"}) {
		t.Errorf("images after GC = %v; want [kept]", got)
	}
	if n := len(entriesUnder(t, kept.LayerDirs[0])); n != 1 {
		t.Errorf("the shared base layer holds %d entries after GC; want it whole", n)
	}
}

func TestGCRemovesOrphanLayersButNotPinnedOnes(t *testing.T) {
	s, _, ids := gcFixture(t, 900)
	a, _ := s.Image(ids["a"])
	b, _ := s.Image(ids["b"])
	s.mu.Lock()
	bLayers := s.idx.Images[ids["b"]].Layers
	s.forgetImageLocked(ids["a"]) // as a failed add leaves them
	s.forgetImageLocked(ids["b"])
	s.mu.Unlock()
	s.pin(bLayers) // as an add under way does
	must(t, s.GC(context.Background(), none, 85, 80))
	if _, err := os.Lstat(a.LayerDirs[0]); err == nil {
		t.Error("the orphan layer of a is still there")
	}
	if _, err := os.Lstat(b.LayerDirs[0]); err != nil {
		t.Errorf("the pinned layer of b is gone: %v", err)
	}
	s.unpin(bLayers)
	must(t, s.GC(context.Background(), none, 85, 80))
	if _, err := os.Lstat(b.LayerDirs[0]); err == nil {
		t.Error("the layer of b is still there once unpinned")
	}
}

func TestGCRefusesBadThresholds(t *testing.T) {
	s, _ := openStore(t)
	for _, hl := range [][2]int{{80, 85}, {101, 50}, {50, -1}} {
		if err := s.GC(context.Background(), none, hl[0], hl[1]); err == nil {
			t.Errorf("GC(high=%d, low=%d) succeeded", hl[0], hl[1])
		}
	}
}
