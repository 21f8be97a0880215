package runtimetest

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/runlet/runlet/internal/runtime"
)

// fixture is the test image as a docker-archive, built once per test binary.
var fixture struct {
	once sync.Once
	tar  []byte
	err  error
}

// LoadFixture loads the suite's image (Image) into rt from a docker-archive
// built here: a static busybox with its applets, as hack/images.sh builds
// for podman, so that any backend can have it without a registry.
func LoadFixture(t testing.TB, rt runtime.Images) {
	t.Helper()
	fixture.once.Do(func() { fixture.tar, fixture.err = buildFixture() })
	if fixture.err != nil {
		t.Fatalf("building the test image %s: %v", Image, fixture.err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	names, err := rt.LoadImage(ctx, bytes.NewReader(fixture.tar))
	if err != nil {
		t.Fatalf("LoadImage of the test image: %v", err)
	}
	if !slices.ContainsFunc(names, func(n string) bool { return strings.TrimPrefix(n, "docker.io/") == Image }) {
		t.Fatalf("LoadImage of the test image gave %v; want %s among them", names, Image)
	}
}

func buildFixture() ([]byte, error) {
	bb, err := StaticBusybox()
	if err != nil {
		return nil, err
	}
	layerTar, err := busyboxLayer(bb)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", goruntime.GOARCH
	cf.Config = v1.Config{Cmd: []string{"/bin/sh"}, Env: []string{"PATH=/bin"}}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return nil, err
	}
	tag, err := name.NewTag(Image)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	err = tarball.Write(tag, img, &out)
	return out.Bytes(), err
}

// StaticBusybox finds a statically linked busybox (Debian's busybox-static):
// a dynamic one would need the host's libraries inside an image.
func StaticBusybox() (string, error) {
	for _, p := range []string{"busybox", "/bin/busybox", "/usr/bin/busybox"} {
		if lp, err := exec.LookPath(p); err == nil && isStatic(lp) {
			return lp, nil
		}
	}
	return "", fmt.Errorf("no statically linked busybox (apt-get install busybox-static)")
}

func isStatic(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false
		}
	}
	return true
}

// busyboxLayer is the image's one layer: busybox, a link per applet in
// /bin, root's passwd and group entries, and the usual empty directories.
func busyboxLayer(bb string) ([]byte, error) {
	bin, err := os.ReadFile(bb)
	if err != nil {
		return nil, err
	}
	list, err := exec.Command(bb, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --list: %w", bb, err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, d := range []struct {
		name string
		mode int64
	}{{"bin", 0o755}, {"etc", 0o755}, {"tmp", 0o1777}, {"proc", 0o755}, {"sys", 0o755}, {"dev", 0o755}, {"root", 0o700}, {"var", 0o755}, {"var/www", 0o755}} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d.name + "/", Mode: d.mode}); err != nil {
			return nil, err
		}
	}
	files := []struct {
		name string
		mode int64
		data []byte
	}{
		{"bin/busybox", 0o755, bin},
		{"etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/bin/sh\n")},
		{"etc/group", 0o644, []byte("root:x:0:\n")},
	}
	for _, f := range files {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.data))}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(f.data); err != nil {
			return nil, err
		}
	}
	for _, applet := range strings.Fields(string(list)) {
		if applet == "busybox" {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + applet, Linkname: "busybox", Mode: 0o777}); err != nil {
			return nil, err
		}
	}
	err = tw.Close()
	return buf.Bytes(), err
}
