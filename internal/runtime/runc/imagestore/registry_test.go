package imagestore

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// testRegistry is go-containerregistry's registry on loopback, with basic
// auth when it has a user, counting the manifests and blobs it serves.
type testRegistry struct {
	host       string
	user, pass string
	inner      http.Handler

	mu   sync.Mutex
	gets map[string]int // "manifests" and "blobs/<digest>" → GETs served
	// holdBlobs, when set, holds every blob GET until it is closed.
	holdBlobs chan struct{}
}

func newRegistry(t *testing.T, user, pass string) *testRegistry {
	t.Helper()
	r := &testRegistry{user: user, pass: pass, gets: map[string]int{},
		inner: registry.New(registry.Logger(log.New(io.Discard, "", 0)))}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	r.host = strings.TrimPrefix(srv.URL, "http://")
	return r
}

func (r *testRegistry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if u, p, ok := req.BasicAuth(); r.user != "" && (!ok || u != r.user || p != r.pass) {
		w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
		http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"who are you"}]}`, http.StatusUnauthorized)
		return
	}
	if req.Method == http.MethodGet {
		r.count(req.URL.Path)
	}
	r.inner.ServeHTTP(w, req)
}

func (r *testRegistry) count(path string) {
	r.mu.Lock()
	hold := r.holdBlobs
	switch {
	case strings.Contains(path, "/manifests/"):
		r.gets["manifests"]++
	case strings.Contains(path, "/blobs/sha256:"):
		r.gets["blobs/"+path[strings.LastIndex(path, "/")+1:]]++
	default:
		hold = nil
	}
	r.mu.Unlock()
	if hold != nil && strings.Contains(path, "/blobs/") {
		<-hold
	}
}

func (r *testRegistry) served(what string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gets[what]
}

// push puts img at repoTag and returns its reference; the counts start
// afresh.
func (r *testRegistry) push(t *testing.T, repoTag string, img v1.Image) string {
	t.Helper()
	ref := r.host + "/" + repoTag
	tag, err := name.ParseReference(ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, img, remote.WithAuth(&authn.Basic{Username: r.user, Password: r.pass})); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	r.gets = map[string]int{}
	r.mu.Unlock()
	return ref
}

// layerBlob is the registry's count key for a layer's blob.
func layerBlob(t *testing.T, l v1.Layer) string {
	t.Helper()
	d, err := l.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return "blobs/" + d.String()
}
