package imagestore

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/runlet/runlet/internal/runtime"
)

// twoImages are two images that share their base layer.
func twoImages(t *testing.T) (v1.Image, v1.Image) {
	t.Helper()
	base := layerOf(t, dir("etc/"), reg("etc/os-release", "ID=test"))
	app := imageOf(t, v1.Config{User: "1000:50", Env: []string{"A=1"}, Cmd: []string{"/app"}, WorkingDir: "/srv"},
		base, layerOf(t, reg("app", "app")))
	tool := imageOf(t, v1.Config{Entrypoint: []string{"/tool"}}, base, layerOf(t, reg("tool", "tool")))
	return app, tool
}

func writeArchive(t *testing.T, refs map[string]v1.Image) string {
	t.Helper()
	m := map[name.Reference]v1.Image{}
	for r, img := range refs {
		ref, err := name.ParseReference(r)
		if err != nil {
			t.Fatal(err)
		}
		m[ref] = img
	}
	p := filepath.Join(t.TempDir(), "images.tar")
	if err := tarball.MultiRefWriteToFile(p, m); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadDockerArchive(t *testing.T) {
	app, tool := twoImages(t)
	p := writeArchive(t, map[string]v1.Image{"app:1": app, "example.com/app:latest": app, "example.com/tool:2": tool})
	s, _ := openStore(t)
	names, err := s.Load(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(names)
	want := []string{"docker.io/library/app:1", "example.com/app:latest", "example.com/tool:2"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("Load = %v; want %v", names, want)
	}
	checkApp(t, s, "app:1")
	a, _ := s.Image("example.com/app:latest")
	b, _ := s.Image("example.com/tool:2")
	if a.LayerDirs[0] != b.LayerDirs[0] {
		t.Errorf("the shared base layer was unpacked twice: %s, %s", a.LayerDirs[0], b.LayerDirs[0])
	}
	if got := a.Names; !reflect.DeepEqual(got, []string{"docker.io/library/app:1", "example.com/app:latest"}) {
		t.Errorf("app's names = %v", got)
	}
}

// checkApp checks that the app image of twoImages is present under ref.
func checkApp(t *testing.T, s *Store, ref string) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.EnsureImage(ctx, ref, runtime.PullNever, nil); err != nil {
		t.Fatalf("EnsureImage(%s, Never) = %v", ref, err)
	}
	im, err := s.Image(ref)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{User: "1000:50", Env: []string{"A=1"}, Cmd: []string{"/app"}, WorkingDir: "/srv"}
	if !reflect.DeepEqual(im.Config, want) {
		t.Errorf("config = %+v; want %+v", im.Config, want)
	}
	if u, err := s.ImageUser(ctx, ref); err != nil || u != "1000:50" {
		t.Errorf("ImageUser = %q, %v", u, err)
	}
	if len(im.LayerDirs) != 2 {
		t.Fatalf("layer dirs = %v", im.LayerDirs)
	}
	if b, err := os.ReadFile(filepath.Join(im.LayerDirs[1], "app")); err != nil || string(b) != "app" {
		t.Errorf("top layer's app = %q, %v", b, err)
	}
}

func TestLocalImagesAreNeverPulled(t *testing.T) {
	app, _ := twoImages(t)
	p := writeArchive(t, map[string]v1.Image{"localhost/runlet/app:latest": app})
	s, _ := openStore(t)
	if _, err := s.Load(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	// No registry answers for localhost here: Always must not ask one.
	if id, err := s.EnsureImage(context.Background(), "localhost/runlet/app", runtime.PullAlways, nil); err != nil || id != digestOf(t, app) {
		t.Errorf("EnsureImage(Always) of a loaded localhost/ image = %s, %v", id, err)
	}
}

func TestLoadGzippedArchive(t *testing.T) {
	app, _ := twoImages(t)
	p := writeArchive(t, map[string]v1.Image{"example.com/app:1": app})
	gz := p + ".gz"
	gzipFile(t, p, gz)
	s, _ := openStore(t)
	if names, err := s.Load(context.Background(), gz); err != nil || !reflect.DeepEqual(names, []string{"example.com/app:1"}) {
		t.Fatalf("Load = %v, %v", names, err)
	}
	checkApp(t, s, "example.com/app:1")
	if got := entriesUnder(t, s.tmpDir()); len(got) != 0 {
		t.Errorf("tmp/ holds %v after a load", got)
	}
}

func gzipFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(out)
	if _, err := io.Copy(zw, in); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeLayout writes an OCI layout: app named by containerd's annotation,
// tool only by a bare tag, and a multi-platform index of which this
// machine's platform is app.
func writeLayout(t *testing.T, app, tool v1.Image) string {
	t.Helper()
	p, err := layout.Write(filepath.Join(t.TempDir(), "layout"), empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	must(t, p.AppendImage(app, layout.WithAnnotations(map[string]string{annotationImageName: "example.com/app:1"})))
	must(t, p.AppendImage(tool, layout.WithAnnotations(map[string]string{annotationRefName: "latest"})))
	here := Options{}.withDefaults().Platform
	other := imageOf(t, v1.Config{}, layerOf(t, reg("other", "other")))
	multi := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: other, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "elsewhere"}}},
		mutate.IndexAddendum{Add: app, Descriptor: v1.Descriptor{Platform: &here}})
	must(t, p.AppendIndex(multi, layout.WithAnnotations(map[string]string{annotationRefName: "example.com/multi:1"})))
	return string(p)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestLoadOCILayout(t *testing.T) {
	app, tool := twoImages(t)
	dir := writeLayout(t, app, tool)
	tarPath := filepath.Join(t.TempDir(), "layout.tar")
	tarDir(t, dir, tarPath)
	for what, path := range map[string]string{"directory": dir, "tarball": tarPath} {
		t.Run(what, func(t *testing.T) {
			s, _ := openStore(t)
			names, err := s.Load(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"example.com/app:1", digestOf(t, tool), "example.com/multi:1"}
			if !reflect.DeepEqual(names, want) {
				t.Errorf("Load = %v; want %v", names, want)
			}
			checkApp(t, s, "example.com/app:1")
			if multi, _ := s.Image("example.com/multi:1"); multi.ID != digestOf(t, app) {
				t.Errorf("multi:1 is %s; want this platform's image, app (%s)", multi.ID, digestOf(t, app))
			}
			if _, err := s.Image(digestOf(t, tool)); err != nil {
				t.Errorf("the unnamed image is not there by its ID: %v", err)
			}
		})
	}
}

func tarDir(t *testing.T, dir, to string) {
	t.Helper()
	f, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	must(t, tw.AddFS(os.DirFS(dir)))
	must(t, tw.Close())
	must(t, f.Close())
}

func TestLoadRefusesWhatIsNoImage(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.tar")
	must(t, os.WriteFile(p, tarBytes(t, reg("hello", "world")), 0o600))
	s, _ := openStore(t)
	if _, err := s.Load(context.Background(), p); err == nil {
		t.Error("Load of a plain tar succeeded")
	}
	if _, err := s.Load(context.Background(), filepath.Join(t.TempDir(), "none")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load of nothing = %v", err)
	}
}
