package imagestore

import (
	"archive/tar"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sys/unix"
)

// addLayers adds an image of the layers under name and returns its layer dirs.
func addLayers(t *testing.T, s *Store, name string, layers ...v1.Layer) []string {
	t.Helper()
	if _, err := s.add(context.Background(), imageOf(t, v1.Config{}, layers...), []string{name}); err != nil {
		t.Fatal(err)
	}
	im, err := s.Image(name)
	if err != nil {
		t.Fatal(err)
	}
	return im.LayerDirs
}

func TestUnpackKeepsModesOwnersLinksAndTimes(t *testing.T) {
	s, _ := openStore(t)
	mtime := time.Date(2020, 5, 6, 7, 8, 9, 0, time.UTC)
	etc := dir("etc/")
	etc.Mode, etc.ModTime = 0o700, mtime
	passwd := reg("etc/passwd", "root:x:0:0")
	passwd.Mode, passwd.Uid, passwd.Gid, passwd.ModTime = 0o640, 1000, 2000, mtime
	su := reg("bin/su", "binary")
	su.Mode = 0o4755
	su.PAXRecords = map[string]string{paxXattr + "user.origin": "test"}
	fifo := tarEntry{Header: tar.Header{Typeflag: tar.TypeFifo, Name: "run/fifo", Mode: 0o600}}
	dirs := addLayers(t, s, "example.com/attrs:1", layerOf(t,
		etc, passwd, su, symlink("bin/sh", "/bin/busybox"), hardlink("bin/su2", "bin/su"), fifo))
	root := dirs[0]

	checkMode(t, filepath.Join(root, "etc"), os.ModeDir|0o700)
	checkMode(t, filepath.Join(root, "etc/passwd"), 0o640)
	checkMode(t, filepath.Join(root, "bin/su"), os.ModeSetuid|0o755)
	checkMode(t, filepath.Join(root, "run/fifo"), os.ModeNamedPipe|0o600)
	if target, err := os.Readlink(filepath.Join(root, "bin/sh")); err != nil || target != "/bin/busybox" {
		t.Errorf("bin/sh links to %q, %v; want /bin/busybox", target, err)
	}
	if inode(t, filepath.Join(root, "bin/su")) != inode(t, filepath.Join(root, "bin/su2")) {
		t.Error("bin/su2 is not a hardlink of bin/su")
	}
	for _, p := range []string{"etc", "etc/passwd"} {
		if fi, err := os.Lstat(filepath.Join(root, p)); err != nil || !fi.ModTime().Equal(mtime) {
			t.Errorf("%s mtime = %v, %v; want %v", p, fi.ModTime(), err, mtime)
		}
	}
	if s.owners {
		st := stat(t, filepath.Join(root, "etc/passwd"))
		if st.Uid != 1000 || st.Gid != 2000 {
			t.Errorf("etc/passwd owner = %d:%d; want 1000:2000", st.Uid, st.Gid)
		}
	}
	buf := make([]byte, 16)
	if n, err := unix.Lgetxattr(filepath.Join(root, "bin/su"), "user.origin", buf); err == nil && string(buf[:n]) != "test" {
		t.Errorf("bin/su user.origin = %q; want test", buf[:n])
	}
	if size, _ := s.ImageSize(context.Background(), "example.com/attrs:1"); size != uint64(len("root:x:0:0")+len("binary")) {
		t.Errorf("ImageSize = %d; want the two files' bytes, the hardlink once", size)
	}
}

func checkMode(t *testing.T, p string, want os.FileMode) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode() != want {
		t.Errorf("%s mode = %v; want %v", p, fi.Mode(), want)
	}
}

func stat(t *testing.T, p string) *syscall.Stat_t {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Sys().(*syscall.Stat_t)
}

func inode(t *testing.T, p string) uint64 { return stat(t, p).Ino }

func TestWhiteoutsHideLowerLayersAsOverlayWould(t *testing.T) {
	s, _ := openStore(t)
	needWhiteouts(t, s)
	base := layerOf(t,
		dir("a/"), reg("a/x", "x"), reg("a/y", "y"),
		dir("b/"), reg("b/z", "z"),
		reg("c", "c"),
		dir("d/"), reg("d/k", "k"),
		dir("e/"), reg("e/old", "old"))
	top := layerOf(t,
		reg("a/.wh.x", ""),
		dir("b/"), reg("b/.wh..wh..opq", ""), reg("b/new", "new"),
		reg(".wh.c", ""),
		reg("d", "now a file"),
		reg(".wh.e", ""), dir("e/"), reg("e/fresh", "fresh"), // a new e, hiding the old one
		reg("f/.wh.g", ""), reg("f/g", "kept"), // an entry of the same layer stays
		reg("h", "kept too"), reg(".wh.h", ""),
		reg(".wh..wh.plnk", ""))
	dirs := addLayers(t, s, "example.com/wh:1", base, top)

	got := overlayView(t, s.opaque, dirs...)
	want := map[string]string{
		"a": "dir", "a/y": "file:y",
		"b": "dir", "b/new": "file:new",
		"d":       "file:now a file",
		"e":       "dir",
		"e/fresh": "file:fresh",
		"f":       "dir", "f/g": "file:kept",
		"h": "file:kept too",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("overlay view =\n%v\nwant\n%v", got, want)
	}
}

func TestUnpackRefusesPathTraversal(t *testing.T) {
	// The symlinks point at the test's own directory (the layer is unpacked
	// in <top>/store/tmp/<dir>), never at the host's root, so that a
	// regression writes nowhere but there.
	cases := map[string][]tarEntry{
		"dotdot":              {reg("../evil", "x")},
		"dotdot inside":       {dir("a/"), reg("a/../../evil", "x")},
		"through a symlink":   {symlink("l", "../../.."), reg("l/evil", "x")},
		"through a deep link": {dir("a/"), symlink("a/l", "../../../.."), reg("a/l/evil", "x")},
		"hardlink out":        {hardlink("h", "../../evil")},
		"hardlink via link":   {symlink("l", "../../.."), hardlink("h", "l/store/lock")},
		"whiteout via link":   {symlink("l", "../../.."), reg("l/.wh.evil", "")},
		"opaque via link":     {symlink("l", "../../.."), reg("l/.wh..wh..opq", "")},
		"whiteout dotdot":     {reg("a/.wh..", "")},
		"hardlink to missing": {hardlink("h", "nothing")},
	}
	for name, entries := range cases {
		t.Run(name, func(t *testing.T) {
			top := t.TempDir()
			s, _ := openStoreAt(t, filepath.Join(top, "store"))
			img := imageOf(t, v1.Config{}, layerOf(t, entries...))
			if _, err := s.add(context.Background(), img, []string{"example.com/evil:1"}); err == nil {
				t.Fatal("add succeeded")
			}
			if got := entriesUnder(t, top); !reflect.DeepEqual(got, []string{"store", "store/index.json", "store/layers", "store/lock", "store/tmp"}) &&
				!reflect.DeepEqual(got, []string{"store", "store/layers", "store/lock", "store/tmp"}) {
				t.Errorf("left on disk: %v", got)
			}
			if _, err := s.Image("example.com/evil:1"); err == nil {
				t.Error("the image was recorded")
			}
		})
	}
}

// lyingLayer says it has another diffID than its content has.
type lyingLayer struct {
	v1.Layer
	diffID v1.Hash
}

func (l lyingLayer) DiffID() (v1.Hash, error) { return l.diffID, nil }

func TestUnpackChecksTheDiffID(t *testing.T) {
	s, _ := openStore(t)
	other := layerOf(t, reg("other", "other"))
	otherID, _ := other.DiffID()
	img := imageOf(t, v1.Config{}, lyingLayer{Layer: layerOf(t, reg("real", "real")), diffID: otherID})
	_, err := s.add(context.Background(), img, []string{"example.com/lie:1"})
	if err == nil || !strings.Contains(err.Error(), "diffID") {
		t.Fatalf("add = %v; want a diffID mismatch", err)
	}
	if got := entriesUnder(t, filepath.Join(s.root, "layers")); len(got) != 0 {
		t.Errorf("layers/ holds %v after a failed unpack", got)
	}
	if got := entriesUnder(t, s.tmpDir()); len(got) != 0 {
		t.Errorf("tmp/ holds %v after a failed unpack", got)
	}
}

func TestLayersAreSharedBetweenImages(t *testing.T) {
	s, _ := openStore(t)
	base := layerOf(t, reg("base", "base"))
	a := addLayers(t, s, "example.com/a:1", base, layerOf(t, reg("a", "a")))
	b := addLayers(t, s, "example.com/b:1", base, layerOf(t, reg("b", "b")))
	if a[0] != b[0] {
		t.Errorf("the shared layer is at %s and %s", a[0], b[0])
	}
	if got := entriesUnder(t, filepath.Join(s.root, "layers")); len(got) != 6 { // 3 layers, one file each
		t.Errorf("layers/ = %v; want three layers", got)
	}
	if sz, _ := s.ImageSize(context.Background(), "example.com/b:1"); sz != 5 {
		t.Errorf("ImageSize(b) = %d; want 5 (shared layers count in each image)", sz)
	}
}

func TestCleanPath(t *testing.T) {
	for in, want := range map[string]string{"./": "", "/etc/x": "etc/x", "a//b/./c": "a/b/c", "a/../b": "b"} {
		if got, err := cleanPath(in); err != nil || got != want {
			t.Errorf("cleanPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"..", "../x", "a/../../x"} {
		if _, err := cleanPath(in); !errors.Is(err, errEscapes) {
			t.Errorf("cleanPath(%q) = %v; want errEscapes", in, err)
		}
	}
}
