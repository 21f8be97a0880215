package localsock

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/runlet/runlet/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }

// A socket left by a runlet that was killed does not stop the next one,
// which answers its client on it, root's alone, and removes it when done.
func TestServeOverAStaleSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.sock")
	stale, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()
	l, err := Listen(path)
	if err != nil {
		t.Fatalf("Listen over a stale socket: %v", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %v, %v; want mode 0600", fi, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, r.URL.Path) }))
	}()
	resp, err := Client(path).Get("http://runlet/hello")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "/hello" {
		t.Errorf("answer %q; want /hello", body)
	}
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve = %v; want nil once ctx ended", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("socket left after Serve: %v", err)
	}
}
