package imagestore

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLayerDirsMountAsOverlay mounts an image's layer dirs as a read-only
// overlay, where the kernel allows this user to, and checks that the
// kernel reads the whiteouts as the image means them.
func TestLayerDirsMountAsOverlay(t *testing.T) {
	s, _ := openStore(t)
	needWhiteouts(t, s)
	if !s.owners {
		t.Skip("mounting an overlay needs root")
	}
	dirs := addLayers(t, s, "example.com/ovl:1",
		layerOf(t, dir("a/"), reg("a/x", "x"), reg("a/y", "y"), dir("b/"), reg("b/z", "z"), reg("c", "c"),
			dir("d/"), reg("d/k", "k"), dir("e/"), reg("e/old", "old")),
		layerOf(t, reg("a/.wh.x", ""), dir("b/"), reg("b/.wh..wh..opq", ""), reg("b/new", "new"), reg(".wh.c", ""),
			reg("d", "file"), reg(".wh.e", ""), dir("e/"), reg("e/fresh", "fresh")))
	lower := slices.Clone(dirs)
	slices.Reverse(lower)
	mnt := t.TempDir()
	if err := unix.Mount("overlay", mnt, "overlay", unix.MS_RDONLY, "lowerdir="+strings.Join(lower, ":")); err != nil {
		t.Skipf("cannot mount an overlay here: %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(mnt, unix.MNT_DETACH) })
	got := overlayView(t, s.opaque, mnt)
	want := map[string]string{"a": "dir", "a/y": "file:y", "b": "dir", "b/new": "file:new",
		"d": "file:file", "e": "dir", "e/fresh": "file:fresh"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the mounted image shows\n%v\nwant\n%v", got, want)
	}
}
