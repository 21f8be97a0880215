package imagestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/runlet/runlet/internal/localsock"
)

// socketName is the store's load socket, beside its lock. The process that
// holds the store (a running runlet) takes loads from `runlet image load`
// through it, so that images reach a running node without a second writer.
const socketName = "load.sock"

// loadPath is the one request the socket answers: POST a tarball, get the
// names it loaded.
const loadPath = "/load"

type loadAnswer struct {
	Names []string `json:"names,omitempty"`
	Error string   `json:"error,omitempty"`
}

// Serve takes loads on the store's socket until ctx ends. Only root can
// connect: the socket is 0600 under the store's 0700 root.
func (s *Store) Serve(ctx context.Context) error {
	// The store's lock is held: a socket left there is a dead runlet's.
	l, err := localsock.Listen(filepath.Join(s.root, socketName))
	if err != nil {
		return fmt.Errorf("image store: load socket: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+loadPath, s.serveLoad)
	return localsock.Serve(ctx, l, mux)
}

// serveLoad writes the streamed tarball under tmp/ (loads need to read it
// more than once) and loads it.
func (s *Store) serveLoad(w http.ResponseWriter, r *http.Request) {
	answer := func(code int, a loadAnswer) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(a)
	}
	f, err := os.CreateTemp(s.tmpDir(), "load-*.tar")
	if err != nil {
		answer(http.StatusInternalServerError, loadAnswer{Error: err.Error()})
		return
	}
	defer os.Remove(f.Name())
	_, err = io.Copy(f, r.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		answer(http.StatusBadRequest, loadAnswer{Error: "receiving the tarball: " + err.Error()})
		return
	}
	names, err := s.Load(r.Context(), f.Name())
	if err != nil {
		answer(http.StatusUnprocessableEntity, loadAnswer{Error: err.Error()})
		return
	}
	answer(http.StatusOK, loadAnswer{Names: names})
}

// Serving reports whether a process serves the store under root: a running
// runlet that holds it.
func Serving(root string) bool {
	conn, err := net.Dial("unix", filepath.Join(root, socketName))
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}

// LoadThrough loads file into the store under root through the socket of
// the process that holds it (see Serving).
func LoadThrough(ctx context.Context, root, file string) ([]string, error) {
	path := filepath.Join(root, socketName)
	body, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://runlet"+loadPath, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-tar")
	resp, err := localsock.Client(path).Do(req)
	if err != nil {
		return nil, fmt.Errorf("sending the tarball to the running runlet: %w", err)
	}
	defer resp.Body.Close()
	var a loadAnswer
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&a); err != nil {
		return nil, fmt.Errorf("the running runlet's answer (%s): %w", resp.Status, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New(strings.TrimSpace(a.Error))
	}
	return a.Names, nil
}
