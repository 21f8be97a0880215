package podman

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/podman/libpod/libpodtest"
)

// answerInfo makes the fake look like a podman 4.3 on a cgroup v1 host
// whose default OCI runtime is crun, with exec answering like podman.
func answerInfo(f *fakePodman) {
	f.handle("GET /_ping", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Libpod-Api-Version", "4.3.1")
		_, _ = w.Write([]byte("OK"))
	})
	f.handle("GET /info", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"host":{"arch":"amd64","os":"linux","cgroupVersion":"v1","ociRuntime":{"name":"crun"},"cpus":48,"memTotal":68719476736},"version":{"Version":"4.3.1"}}`)
	})
	f.json("POST /containers/c1/exec", 201, map[string]any{"Id": "e1"})
	f.handle("GET /exec/e1/json", func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"ID": "e1", "ExitCode": 3})
	})
}

// execThrough runs an exec with stdin through b: the half-close that ends
// stdin must cross the transport.
func execThrough(t *testing.T, f *fakePodman, b *Backend) {
	t.Helper()
	f.handle("POST /exec/e1/start", libpodtest.EchoExec(t))
	var out, errb bytes.Buffer
	code, err := b.Exec(context.Background(), "c1", []string{"cat"},
		runtime.StreamIO{Stdin: strings.NewReader("abc"), Stdout: &out, Stderr: &errb})
	if err != nil || code != 3 || out.String() != "got:abc" || errb.String() != "eof seen\n" {
		t.Errorf("exec = %d, %v, stdout %q, stderr %q", code, err, out.String(), errb.String())
	}
}

func TestTCPEndpoint(t *testing.T) {
	f := newFakePodman(t)
	answerInfo(f)
	srv := httptest.NewServer(f.Server)
	t.Cleanup(srv.Close)
	b, err := New(context.Background(), Options{Socket: "tcp://" + srv.Listener.Addr().String(), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	checkRemote(t, b)
	execThrough(t, f, b)
}

func checkRemote(t *testing.T, b *Backend) {
	t.Helper()
	caps := b.Capabilities()
	if !b.Remote() || len(caps.Limitations) == 0 || caps.ExitHints || caps.HostFiles || caps.SignalCheck {
		t.Errorf("Remote() = %v, capabilities %+v; want a remote backend that says what degrades", b.Remote(), caps)
	}
	h, _ := b.Info(context.Background())
	if !h.Remote || h.CPUs != 48 || h.MemoryBytes != 64<<30 {
		t.Errorf("host info %+v; want the remote host's size", h)
	}
	if b.OCIRuntime() != "crun" {
		t.Errorf("OCI runtime %q; a remote host keeps its default whatever this host has installed", b.OCIRuntime())
	}
	if b.RLimits() != nil {
		t.Errorf("rlimits %v; this host's limits say nothing about the remote one", b.RLimits())
	}
	ch := make(chan runtime.Event)
	if _, ok := b.watchExits(context.Background(), ch); ok {
		t.Error("watching this host's exit files for a remote podman")
	}
}
