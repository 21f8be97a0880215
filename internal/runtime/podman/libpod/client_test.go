package libpod

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/podman/libpod/libpodtest"
)

func fakeClient(t *testing.T) (*libpodtest.Server, *Client) {
	t.Helper()
	f := libpodtest.New(t)
	return f, NewClient("unix://" + f.Socket())
}

func TestNotFoundCarriesPodmanMessage(t *testing.T) {
	f, c := fakeClient(t)
	f.JSON("GET /containers/abc/json", 404, map[string]any{"cause": "no such container",
		"message": `no container with name or ID "abc" found: no such container`, "response": 404})
	_, err := c.InspectContainer(context.Background(), "abc")
	if !errors.Is(err, runtime.ErrNotFound) {
		t.Fatalf("err = %v; want ErrNotFound", err)
	}
	if !strings.Contains(err.Error(), `no container with name or ID "abc" found`) {
		t.Errorf("err = %q; want podman's message in it", err)
	}
}

func TestServerErrorIsNotNotFound(t *testing.T) {
	f, c := fakeClient(t)
	f.JSON("POST /containers/abc/start", 500, map[string]any{"cause": "OCI runtime error",
		"message": "runc: error setting rlimit type 6: operation not permitted", "response": 500})
	err := c.StartContainer(context.Background(), "abc")
	if err == nil || errors.Is(err, runtime.ErrNotFound) || !strings.Contains(err.Error(), "error setting rlimit type 6") {
		t.Errorf("err = %v; want a non-404 error with podman's message", err)
	}
}

func TestPing(t *testing.T) {
	f, c := fakeClient(t)
	f.Handle("GET /_ping", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Libpod-Api-Version", "4.3.1")
		_, _ = w.Write([]byte("OK"))
	})
	if v, err := c.Ping(context.Background()); err != nil || v != "4.3.1" {
		t.Errorf("Ping = %q, %v", v, err)
	}
}
