package libpodtest

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// Server answers libpod routes with canned handlers and records what it was
// sent. It serves a unix socket of its own and, as an http.Handler, any
// other listener a test gives it (TCP, an ssh forward).
type Server struct {
	socket   string
	mu       sync.Mutex
	handlers map[string]http.HandlerFunc // "METHOD /path" below the API prefix
	requests []Request
}

// Request is one request the server was sent; Path is below the API prefix.
type Request struct {
	Method, Path string
	Query        url.Values
	Body         []byte
}

// New starts a server on a new unix socket, stopped when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	// Not t.TempDir(): a long test name would push the socket's path past
	// the 108 bytes a unix socket may have.
	dir, err := os.MkdirTemp("", "runlet-fake-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	s := &Server{socket: filepath.Join(dir, "podman.sock"), handlers: map[string]http.HandlerFunc{}}
	l, err := net.Listen("unix", s.socket)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(s)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return s
}

// Socket is the path of the server's unix socket.
func (s *Server) Socket() string { return s.socket }

// Handle answers route ("GET /containers/c1/json") with h.
func (s *Server) Handle(route string, h http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[route] = h
}

// JSON answers route with a status and a JSON value.
func (s *Server) JSON(route string, status int, v any) {
	s.Handle(route, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	})
}

// apiPrefix is any version's: podman serves them all.
var apiPrefix = regexp.MustCompile(`^/v[0-9.]+/libpod`)

// ServeHTTP records the request and answers it with the route's handler, or
// with podman's 404 when the route has none.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	path := apiPrefix.ReplaceAllString(r.URL.Path, "")
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: path, Query: r.URL.Query(), Body: body})
	h := s.handlers[r.Method+" "+path]
	s.mu.Unlock()
	if h == nil {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"cause":"no such thing","message":"fake: no handler for `+r.Method+" "+path+`","response":404}`)
		return
	}
	r.Body = io.NopCloser(strings.NewReader(string(body)))
	h(w, r)
}

// Sent returns the requests sent to a route, oldest first.
func (s *Server) Sent(route string) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.requests {
		if r.Method+" "+r.Path == route {
			out = append(out, r)
		}
	}
	return out
}
