package podman

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/podman/podmanservice"
)

// fakePodman is an httptest server on a unix socket that answers libpod
// paths with canned handlers and records what it was sent.
type fakePodman struct {
	t        *testing.T
	socket   string
	mu       sync.Mutex
	handlers map[string]http.HandlerFunc // "METHOD /path" below the API prefix
	requests []recorded
}

type recorded struct {
	Method, Path string
	Query        url.Values
	Body         []byte
}

func newFakePodman(t *testing.T) *fakePodman {
	t.Helper()
	dir, err := os.MkdirTemp("", "runlet-fake-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	f := &fakePodman{t: t, socket: filepath.Join(dir, "podman.sock"), handlers: map[string]http.HandlerFunc{}}
	l, err := net.Listen("unix", f.socket)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return f
}

func (f *fakePodman) handle(route string, h http.HandlerFunc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handlers[route] = h
}

// json answers route with a status and a JSON value.
func (f *fakePodman) json(route string, status int, v any) {
	f.handle(route, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	})
}

func (f *fakePodman) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	path := strings.TrimPrefix(r.URL.Path, apiPrefix)
	f.mu.Lock()
	f.requests = append(f.requests, recorded{Method: r.Method, Path: path, Query: r.URL.Query(), Body: body})
	h := f.handlers[r.Method+" "+path]
	f.mu.Unlock()
	if h == nil {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"cause":"no such thing","message":"fake: no handler for `+r.Method+" "+path+`","response":404}`)
		return
	}
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	h(w, r)
}

// sent returns the recorded requests to a route.
func (f *fakePodman) sent(route string) []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []recorded
	for _, r := range f.requests {
		if r.Method+" "+r.Path == route {
			out = append(out, r)
		}
	}
	return out
}

// backend returns a Backend on the fake, as New would have set it up on a
// cgroup v1 host without CAP_SYS_RESOURCE.
func (f *fakePodman) backend() *Backend {
	return &Backend{
		opts:       Options{Logf: f.t.Logf, ExitDir: f.t.TempDir()},
		client:     NewClient("unix://" + f.socket),
		ociRuntime: "runc",
		rlimits:    specRLimits(podmanservice.Limits{NoFile: 20000, NProc: 32768}),
		sandboxes:  map[string]sandboxMeta{},
		details:    map[string]ctrDetail{},
		host:       runtime.HostInfo{RuntimeName: "podman"},
	}
}
