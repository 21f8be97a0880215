package nodeshutdown

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
)

// SocketName is the trigger's socket under --root-dir.
const SocketName = "shutdown.sock"

// requestPath is where a POST starts the node's shutdown and answers once
// its pods have stopped.
const requestPath = "/shutdown"

// Listen opens the trigger's socket at path, root's alone (0600); a socket
// left there by a runlet that was killed is replaced.
func Listen(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode().Type() == fs.ModeSocket {
		_ = os.Remove(path)
	}
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("node shutdown socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("node shutdown socket: %w", err)
	}
	return l, nil
}

// Serve answers shutdown requests on l until ctx ends, then removes the
// socket. A request starts the shutdown (or joins the one under way) and
// is answered once every pod has stopped: a shutdown script blocks on it.
func Serve(ctx context.Context, l net.Listener, m *Manager, log logrus.FieldLogger) {
	srv := &http.Server{Handler: handler(ctx, m, log), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.WithError(err).Error("node shutdown socket stopped")
	}
}

// handler runs the shutdown under runlet's ctx, so that a client that
// stops waiting does not stop the shutdown.
func handler(ctx context.Context, m *Manager, log logrus.FieldLogger) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+requestPath, func(w http.ResponseWriter, r *http.Request) {
		log.Info("node shutdown requested on the socket")
		done, err := m.Shutdown(ctx)
		if err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		select {
		case <-done:
			fmt.Fprintln(w, "the node's pods have stopped")
		case <-r.Context().Done():
		case <-ctx.Done():
			http.Error(w, "runlet stopped before the node's pods did", http.StatusServiceUnavailable)
		}
	})
	return mux
}

// Request asks the runlet whose --root-dir is rootDir to shut the node
// down, and returns once its pods have stopped, with its answer; ctx
// bounds the wait.
func Request(ctx context.Context, rootDir string) (string, error) {
	path := filepath.Join(rootDir, SocketName)
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", path)
		},
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://runlet"+requestPath, nil)
	if err != nil {
		return "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("no runlet answers on %s: %w", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	msg := strings.TrimSpace(string(body))
	if err != nil {
		return "", fmt.Errorf("runlet's answer on %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", errors.New(msg)
	}
	return msg, nil
}
