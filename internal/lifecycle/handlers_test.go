package lifecycle

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runtimefake"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/record"
)

var pod = &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "uid"}}

func TestExecHandler(t *testing.T) {
	f := runtimefake.New()
	ctx := context.Background()
	sb, _ := f.CreateSandbox(ctx, runtime.SandboxConfig{PodUID: "uid"})
	id, _ := f.CreateContainer(ctx, sb.ID, runtime.ContainerConfig{Name: "c", Image: "img"})
	var ran []string
	f.HandleExec(func(_ context.Context, _ string, cmd []string, sio runtime.StreamIO) (int, error) {
		ran = cmd
		if cmd[0] == "false" {
			_, _ = io.WriteString(sio.Stderr, "nope")
			return 1, nil
		}
		return 0, nil
	})
	r := NewRunner(f, nil, nil)
	c := &v1.Container{Name: "c"}
	if msg, err := r.Run(ctx, pod, c, id, "", &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"touch", "/x"}}}); err != nil || msg != "" {
		t.Fatalf("exec hook: %q %v", msg, err)
	}
	if strings.Join(ran, " ") != "touch /x" {
		t.Fatalf("ran %q", ran)
	}
	msg, err := r.Run(ctx, pod, c, id, "", &v1.LifecycleHandler{Exec: &v1.ExecAction{Command: []string{"false"}}})
	want := `Exec lifecycle hook ([false]) for Container "c" in Pod "p_ns(uid)" failed - error: command 'false' exited with 1, message: "nope"`
	if err == nil || msg != want {
		t.Fatalf("failing exec hook: %q %v\nwant %q", msg, err, want)
	}
}

func TestHTTPHandler(t *testing.T) {
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		w.WriteHeader(http.StatusInternalServerError) // a hook's status code does not matter
	}))
	defer srv.Close()
	host, port := split(t, srv.URL)
	c := &v1.Container{Name: "c", Ports: []v1.ContainerPort{{Name: "web", ContainerPort: int32(port)}}}
	r := NewRunner(nil, nil, nil)
	h := &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/echo?msg=poststart", Port: intstr.FromString("web")}}
	if msg, err := r.Run(context.Background(), pod, c, "id", host, h); err != nil {
		t.Fatalf("http hook: %q %v", msg, err)
	}
	if got.URL.RequestURI() != "/echo?msg=poststart" || got.UserAgent() != "kube-lifecycle/1.37" {
		t.Fatalf("request %s ua %q", got.URL.RequestURI(), got.UserAgent())
	}
	srv.Close()
	msg, err := r.Run(context.Background(), pod, c, "id", host, h)
	if err == nil || !strings.HasPrefix(msg, `HTTP lifecycle hook (/echo?msg=poststart) for Container "c" in Pod "p_ns(uid)" failed - error: `) {
		t.Fatalf("hook to a closed port: %q %v", msg, err)
	}
	if _, err := r.Run(context.Background(), pod, c, "id", "", h); err == nil {
		t.Fatal("a hook without a host or pod IP succeeded")
	}
}

func TestHTTPSHandlerFallsBackToHTTP(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits++ }))
	defer srv.Close()
	host, port := split(t, srv.URL)
	rec := record.NewFakeRecorder(5)
	r := NewRunner(nil, rec, nil)
	h := &v1.LifecycleHandler{HTTPGet: &v1.HTTPGetAction{Path: "/", Port: intstr.FromInt(port), Scheme: v1.URISchemeHTTPS}}
	if _, err := r.Run(context.Background(), pod, &v1.Container{Name: "c"}, "id", host, h); err != nil || hits != 1 {
		t.Fatalf("https hook to an http server: %v, %d hits", err, hits)
	}
	if e := <-rec.Events; !strings.HasPrefix(e, "Warning LifecycleHTTPFallback request to HTTPS lifecycle hook") {
		t.Fatalf("event %q", e)
	}
}

func TestSleepHandler(t *testing.T) {
	r := NewRunner(nil, nil, nil)
	c := &v1.Container{Name: "c"}
	if _, err := r.Run(context.Background(), pod, c, "id", "", &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 0}}); err != nil {
		t.Fatalf("zero sleep: %v", err)
	}
	// A shorter grace period (the context) cuts the sleep.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	msg, err := r.Run(ctx, pod, c, "id", "", &v1.LifecycleHandler{Sleep: &v1.SleepAction{Seconds: 3600}})
	if err == nil || msg != `Sleep lifecycle hook (3600) for Container "c" in Pod "p_ns(uid)" failed - error: container terminated before sleep hook finished` {
		t.Fatalf("cut sleep: %q %v", msg, err)
	}
}

func split(t *testing.T, u string) (string, int) {
	t.Helper()
	host, port, err := net.SplitHostPort(strings.TrimPrefix(u, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	return host, p
}
