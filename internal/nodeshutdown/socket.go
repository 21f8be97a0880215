package nodeshutdown

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/runlet/runlet/internal/localsock"
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
	l, err := localsock.Listen(path)
	if err != nil {
		return nil, fmt.Errorf("node shutdown socket: %w", err)
	}
	return l, nil
}

// Serve answers shutdown requests on l until ctx ends, then removes the
// socket. A request starts the shutdown (or joins the one under way) and
// is answered once every pod has stopped: a shutdown script blocks on it.
func Serve(ctx context.Context, l net.Listener, m *Manager, log logrus.FieldLogger) {
	if err := localsock.Serve(ctx, l, handler(ctx, m, log)); err != nil {
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
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://runlet"+requestPath, nil)
	if err != nil {
		return "", err
	}
	resp, err := localsock.Client(path).Do(req)
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
