package imagestore

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/runlet/runlet/internal/runtime"
)

func TestPullAnonymously(t *testing.T) {
	reg := newRegistry(t, "", "")
	app, _ := twoImages(t)
	ref := reg.push(t, "team/app:1", app)
	s, _ := openStore(t)
	ctx := context.Background()
	id, err := s.EnsureImage(ctx, ref, runtime.PullIfNotPresent, nil)
	if err != nil {
		t.Fatal(err)
	}
	if id != digestOf(t, app) {
		t.Errorf("ID = %s; want the manifest digest %s", id, digestOf(t, app))
	}
	checkApp(t, s, ref)
	if again, err := s.EnsureImage(ctx, ref, runtime.PullIfNotPresent, nil); err != nil || again != id {
		t.Errorf("second EnsureImage = %s, %v", again, err)
	}
	if n := reg.served("manifests"); n != 1 {
		t.Errorf("the registry served %d manifests; IfNotPresent of a present image asks for none", n)
	}
	if _, err := s.EnsureImage(ctx, ref[:strings.Index(ref, ":1")]+"@"+id, runtime.PullNever, nil); err != nil {
		t.Errorf("the image by digest: %v", err)
	}
}

func TestPullPolicies(t *testing.T) {
	reg := newRegistry(t, "", "")
	base := layerOf(t, reg2("base"))
	v1img := imageOf(t, v1.Config{Cmd: []string{"v1"}}, base, layerOf(t, reg2("one")))
	ref := reg.push(t, "team/app:stable", v1img)
	s, _ := openStore(t)
	ctx := context.Background()

	_, err := s.EnsureImage(ctx, ref, runtime.PullNever, nil)
	if !errors.Is(err, runtime.ErrImageNotFound) || !strings.Contains(err.Error(), ref) {
		t.Errorf("Never of a missing image = %v; want ErrImageNotFound naming the image", err)
	}
	if n := reg.served("manifests"); n != 0 {
		t.Errorf("Never asked the registry %d times", n)
	}
	id1, err := s.EnsureImage(ctx, ref, runtime.PullAlways, nil)
	if err != nil {
		t.Fatal(err)
	}

	v2img := imageOf(t, v1.Config{Cmd: []string{"v2"}}, base, layerOf(t, reg2("two")))
	reg.push(t, "team/app:stable", v2img)
	if id, err := s.EnsureImage(ctx, ref, runtime.PullIfNotPresent, nil); err != nil || id != id1 {
		t.Errorf("IfNotPresent after the tag moved = %s, %v; want the present %s", id, err, id1)
	}
	id2, err := s.EnsureImage(ctx, ref, runtime.PullAlways, nil)
	if err != nil || id2 != digestOf(t, v2img) {
		t.Fatalf("Always after the tag moved = %s, %v; want %s", id2, err, digestOf(t, v2img))
	}
	if n := reg.served(layerBlob(t, base)); n != 0 {
		t.Errorf("Always fetched the base layer the store has %d times", n)
	}
	if im, _ := s.Image(ref); im.ID != id2 || im.Config.Cmd[0] != "v2" {
		t.Errorf("the name means %s (%v); want %s", im.ID, im.Config.Cmd, id2)
	}
	if old, err := s.Image(id1); err != nil || len(old.Names) != 0 {
		t.Errorf("the old image = %+v, %v; want it kept, unnamed, for GC", old, err)
	}
	if _, err := s.EnsureImage(ctx, ref, runtime.PullPolicy("Sometimes"), nil); err == nil {
		t.Error("an unknown pull policy was taken")
	}
}

func reg2(body string) tarEntry { return reg(body, body) }

func TestPullCredentials(t *testing.T) {
	reg := newRegistry(t, "alice", "s3cret")
	app, _ := twoImages(t)
	ref := reg.push(t, "private/app:1", app)
	wrong := runtime.Credential{Server: reg.host, Username: "alice", Password: "guess"}
	right := runtime.Credential{Server: reg.host, Username: "alice", Password: "s3cret"}
	ctx := context.Background()

	for what, creds := range map[string][]runtime.Credential{"none": nil, "a wrong one": {wrong}} {
		s, _ := openStore(t)
		_, err := s.EnsureImage(ctx, ref, runtime.PullIfNotPresent, creds)
		if !errors.Is(err, runtime.ErrImageNotFound) || !strings.Contains(err.Error(), ref) || !strings.Contains(err.Error(), "UNAUTHORIZED") {
			t.Errorf("with %s: %v; want ErrImageNotFound naming the image and the refusal", what, err)
		}
	}
	s, _ := openStore(t)
	if _, err := s.EnsureImage(ctx, ref, runtime.PullIfNotPresent, []runtime.Credential{wrong, right}); err != nil {
		t.Fatalf("with a wrong credential, then the right one: %v", err)
	}
	checkApp(t, s, ref)
}

func TestPullOfAMissingImage(t *testing.T) {
	reg := newRegistry(t, "", "")
	s, _ := openStore(t)
	ref := reg.host + "/nobody/nothing:1"
	_, err := s.EnsureImage(context.Background(), ref, runtime.PullIfNotPresent, nil)
	if !errors.Is(err, runtime.ErrImageNotFound) || !strings.Contains(err.Error(), ref) || !strings.Contains(err.Error(), "NAME_UNKNOWN") {
		t.Errorf("EnsureImage = %v; want ErrImageNotFound naming the image and the registry's answer", err)
	}
	if _, err := s.EnsureImage(context.Background(), "Not A Name", runtime.PullIfNotPresent, nil); !errors.Is(err, runtime.ErrImageNotFound) {
		t.Errorf("EnsureImage of a bad name = %v; want ErrImageNotFound", err)
	}
}

func TestConcurrentPullsShareOneDownload(t *testing.T) {
	reg := newRegistry(t, "", "")
	app, _ := twoImages(t)
	ref := reg.push(t, "team/app:1", app)
	s, _ := openStore(t)
	// The registry holds its blobs until the second pull has joined the
	// first: without sharing, both would fetch everything.
	hold := make(chan struct{})
	reg.holdBlobs = hold
	var once sync.Once
	s.pulls.joined = func(string) { once.Do(func() { close(hold) }) }

	ids := make([]string, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() { ids[i], errs[i] = s.EnsureImage(context.Background(), ref, runtime.PullAlways, nil) })
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil || ids[i] != digestOf(t, app) {
			t.Errorf("pull %d = %s, %v", i, ids[i], errs[i])
		}
	}
	if n := reg.served("manifests"); n != 1 {
		t.Errorf("the registry served %d manifests; want 1", n)
	}
	layers, _ := app.Layers()
	for _, l := range layers {
		if n := reg.served(layerBlob(t, l)); n != 1 {
			t.Errorf("the registry served %s %d times; want 1", layerBlob(t, l), n)
		}
	}
}

// heldLayer counts the reads of its content, and holds each until release
// is closed.
type heldLayer struct {
	v1.Layer
	release chan struct{}
	mu      sync.Mutex
	reads   int
}

func (l *heldLayer) Uncompressed() (io.ReadCloser, error) {
	l.mu.Lock()
	l.reads++
	l.mu.Unlock()
	<-l.release
	return l.Layer.Uncompressed()
}

func TestConcurrentAddsShareOneLayer(t *testing.T) {
	s, _ := openStore(t)
	base := &heldLayer{Layer: layerOf(t, reg2("base")), release: make(chan struct{})}
	var once sync.Once
	s.layers.joined = func(string) { once.Do(func() { close(base.release) }) }
	var wg sync.WaitGroup
	for _, tag := range []string{"a", "b"} {
		img := imageOf(t, v1.Config{}, base, layerOf(t, reg2(tag)))
		wg.Go(func() {
			if _, err := s.add(context.Background(), img, []string{"example.com/x:" + tag}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if base.reads != 1 {
		t.Errorf("the shared layer was read %d times; want 1", base.reads)
	}
	a, _ := s.Image("example.com/x:a")
	b, _ := s.Image("example.com/x:b")
	if a.LayerDirs[0] != b.LayerDirs[0] {
		t.Errorf("the shared layer is at %s and %s", a.LayerDirs[0], b.LayerDirs[0])
	}
}
