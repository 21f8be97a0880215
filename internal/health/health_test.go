package health

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// errBox holds the error a fake check returns.
type errBox struct {
	mu  sync.Mutex
	err error
}

func (b *errBox) set(err error) { b.mu.Lock(); b.err = err; b.mu.Unlock() }
func (b *errBox) get() error    { b.mu.Lock(); defer b.mu.Unlock(); return b.err }

type pinger struct{ errBox }

func (p *pinger) Ping(context.Context) error { return p.get() }

// apiserver answers /healthz with what healthy says.
func apiserver(t *testing.T, healthy *atomic.Bool) rest.Interface {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			http.NotFound(w, r)
			return
		}
		if !healthy.Load() {
			http.Error(w, "[-]etcd failed", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	cs, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return cs.Discovery().RESTClient()
}

func get(t *testing.T, h http.Handler, path string) (int, string) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

func TestHealthzFollowsAPIServerAndBackend(t *testing.T) {
	var up atomic.Bool
	up.Store(true)
	p := &pinger{}
	pleg := &errBox{}
	mux := http.NewServeMux()
	Install(mux, APIServer(apiserver(t, &up)), Backend(p), Func("pleg", pleg.get))

	if code, body := get(t, mux, "/healthz"); code != http.StatusOK || body != "ok" {
		t.Fatalf("healthy: got %d %q", code, body)
	}
	if code, body := get(t, mux, "/healthz?verbose"); code != http.StatusOK ||
		!strings.Contains(body, "[+]apiserver ok") || !strings.Contains(body, "[+]backend ok") || !strings.Contains(body, "[+]pleg ok") {
		t.Fatalf("verbose: got %d %q", code, body)
	}

	up.Store(false)
	code, body := get(t, mux, "/healthz?verbose")
	if code != http.StatusInternalServerError || !strings.Contains(body, "[-]apiserver failed") || !strings.Contains(body, "[+]backend ok") {
		t.Fatalf("apiserver down: got %d %q", code, body)
	}
	if code, _ := get(t, mux, "/healthz/backend"); code != http.StatusOK {
		t.Fatalf("/healthz/backend with the apiserver down: got %d", code)
	}

	up.Store(true)
	p.set(errors.New("dial unix /run/podman/podman.sock: connection refused"))
	if code, body := get(t, mux, "/healthz?verbose"); code != http.StatusInternalServerError || !strings.Contains(body, "[-]backend failed") {
		t.Fatalf("backend down: got %d %q", code, body)
	}
	if code, _ := get(t, mux, "/healthz/apiserver"); code != http.StatusOK {
		t.Fatalf("/healthz/apiserver with the backend down: got %d", code)
	}

	p.set(nil)
	pleg.set(errors.New("PLEG is not healthy"))
	if code, body := get(t, mux, "/healthz?verbose"); code != http.StatusInternalServerError || !strings.Contains(body, "[-]pleg failed") {
		t.Fatalf("pleg stuck: got %d %q", code, body)
	}
}
