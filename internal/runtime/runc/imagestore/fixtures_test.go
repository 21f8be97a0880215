package imagestore

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"golang.org/x/sys/unix"
)

// tarEntry is one entry of a layer a test writes by hand.
type tarEntry struct {
	tar.Header
	Body string
}

func reg(name, body string) tarEntry {
	return tarEntry{Header: tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(body))}, Body: body}
}

func dir(name string) tarEntry {
	return tarEntry{Header: tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755}}
}

func symlink(name, target string) tarEntry {
	return tarEntry{Header: tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target, Mode: 0o777}}
}

func hardlink(name, target string) tarEntry {
	return tarEntry{Header: tar.Header{Typeflag: tar.TypeLink, Name: name, Linkname: target, Mode: 0o644}}
}

func tarBytes(t *testing.T, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		h := e.Header
		if h.Format == tar.FormatUnknown && len(h.PAXRecords) > 0 {
			h.Format = tar.FormatPAX
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatalf("tar header %s: %v", h.Name, err)
		}
		if _, err := io.WriteString(tw, e.Body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// layerOf is a gzipped layer holding the entries, as registries serve them.
func layerOf(t *testing.T, entries ...tarEntry) v1.Layer {
	t.Helper()
	b := tarBytes(t, entries...)
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// imageOf is a linux image of this machine's architecture with cfg and layers.
func imageOf(t *testing.T, cfg v1.Config, layers ...v1.Layer) v1.Image {
	t.Helper()
	img, err := mutate.AppendLayers(empty.Image, layers...)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Config = "linux", goruntime.GOARCH, cfg
	img, err = mutate.ConfigFile(img, cf)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func digestOf(t *testing.T, img v1.Image) string {
	t.Helper()
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}

// openStore opens a store in a directory of the test's own, with a clock
// the test moves.
func openStore(t *testing.T) (*Store, *fakeClock) {
	t.Helper()
	return openStoreAt(t, filepath.Join(t.TempDir(), "store"))
}

func openStoreAt(t *testing.T, root string) (*Store, *fakeClock) {
	t.Helper()
	s, err := Open(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	s.now = clock.now
	t.Cleanup(func() { _ = s.Close() })
	return s, clock
}

type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

// entriesUnder lists what is under dir, relative to it.
func entriesUnder(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// overlayView is what an overlay mount of the layer dirs (base first)
// would show: path → "dir", "file:<content>" or "link:<target>". It reads
// whiteouts and opaque dirs as overlayfs does.
func overlayView(t *testing.T, opaque string, dirs ...string) map[string]string {
	t.Helper()
	view := map[string]string{}
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil || p == d {
				return err
			}
			rel, _ := filepath.Rel(d, p)
			return overlayEntry(view, opaque, p, rel, e)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return view
}

func overlayEntry(view map[string]string, opaque, p, rel string, e fs.DirEntry) error {
	fi, err := e.Info()
	if err != nil {
		return err
	}
	upperIsDir := fi.IsDir()
	if !upperIsDir || isOpaque(p, opaque) || view[rel] != "dir" {
		for k := range view { // what the lower layers have below rel is hidden
			if strings.HasPrefix(k, rel+"/") {
				delete(view, k)
			}
		}
	}
	switch {
	case isWhiteout(fi):
		delete(view, rel)
	case upperIsDir:
		view[rel] = "dir"
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(p)
		view[rel] = "link:" + target
	default:
		b, err := os.ReadFile(p)
		view[rel] = "file:" + string(b)
		return err
	}
	return nil
}

func isWhiteout(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && fi.Mode()&fs.ModeCharDevice != 0 && st.Rdev == 0
}

func isOpaque(p, attr string) bool {
	buf := make([]byte, 8)
	n, err := unix.Lgetxattr(p, attr, buf)
	return err == nil && string(buf[:n]) == "y"
}

// needWhiteouts skips a test on a host where this user cannot make
// overlayfs whiteouts (a 0/0 device) or set the opaque xattr.
func needWhiteouts(t *testing.T, s *Store) {
	t.Helper()
	d := t.TempDir()
	if err := unix.Mknod(filepath.Join(d, "wh"), unix.S_IFCHR, 0); err != nil {
		t.Skipf("cannot make a whiteout here: %v", err)
	}
	if err := unix.Lsetxattr(d, s.opaque, []byte("y"), 0); errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOTSUP) {
		t.Skipf("cannot set %s here: %v", s.opaque, err)
	}
}
