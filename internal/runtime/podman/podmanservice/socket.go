package podmanservice

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// DefaultSocket is where a podman service run by the host's init system
// listens: runlet adopts it before starting a service of its own.
func DefaultSocket() string {
	if os.Geteuid() == 0 {
		return "/run/podman/podman.sock"
	}
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		return filepath.Join(dir, "podman", "podman.sock")
	}
	return fmt.Sprintf("/run/user/%d/podman/podman.sock", os.Geteuid())
}

// Ping checks that podman's API answers at url (unix:///path, a bare path
// or tcp://host:port). A socket that accepts but is not podman's fails: the
// header podman sets is required.
func Ping(ctx context.Context, url string) error {
	network, addr := splitURL(url)
	tr := &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://d/_ping", nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("podman /_ping: %s", resp.Status)
	}
	if resp.Header.Get("Libpod-Api-Version") == "" {
		return errors.New("podman /_ping: no Libpod-Api-Version header: not a podman service")
	}
	return nil
}

// splitURL turns a service URL into what net.Dial takes.
func splitURL(url string) (network, addr string) {
	if hostPort, ok := strings.CutPrefix(url, "tcp://"); ok {
		return "tcp", hostPort
	}
	return "unix", strings.TrimPrefix(url, "unix://")
}
