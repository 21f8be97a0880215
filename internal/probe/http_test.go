package probe

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// serverAction returns an HTTPGetAction aimed at srv's host and port.
func serverAction(t *testing.T, srv *httptest.Server, path string) (*v1.HTTPGetAction, string) {
	t.Helper()
	u, _ := url.Parse(srv.URL)
	host, port, _ := net.SplitHostPort(u.Host)
	p, _ := strconv.Atoi(port)
	return &v1.HTTPGetAction{Path: path, Port: intstr.FromInt(p), Scheme: v1.URIScheme(strings.ToUpper(u.Scheme))}, host
}

func probeHTTP(t *testing.T, srv *httptest.Server, path string, headers ...v1.HTTPHeader) (Result, string) {
	t.Helper()
	action, host := serverAction(t, srv, path)
	action.HTTPHeaders = headers
	req, err := NewRequestForHTTPGetAction(action, &v1.Container{}, host, "probe")
	if err != nil {
		t.Fatal(err)
	}
	res, out, err := NewHTTPProber(false).Probe(req, 5*time.Second)
	if err != nil {
		t.Fatalf("probe error: %v", err)
	}
	return res, out
}

func TestHTTPProbeStatusCodes(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.URL.Query().Get("code"))
		w.WriteHeader(code)
		_, _ = w.Write([]byte("body"))
	}))
	defer srv.Close()
	for code, want := range map[int]Result{200: Success, 204: Success, 304: Warning, 400: Failure, 500: Failure} {
		res, out := probeHTTP(t, srv, "/?code="+strconv.Itoa(code))
		if res != want {
			t.Errorf("code %d: %s (%q), want %s", code, res, out, want)
		}
		if res == Failure && out != "HTTP probe failed with statuscode: "+strconv.Itoa(code) {
			t.Errorf("code %d: output %q", code, out)
		}
	}
}

func TestHTTPProbeRequest(t *testing.T) {
	var got *http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r }))
	defer srv.Close()
	if res, _ := probeHTTP(t, srv, "/healthz?x=1", v1.HTTPHeader{Name: "X-Probe", Value: "yes"}); res != Success {
		t.Fatalf("result %s", res)
	}
	if ua := got.UserAgent(); ua != "kube-probe/1.37" {
		t.Errorf("User-Agent %q", ua)
	}
	if got.Header.Get("X-Probe") != "yes" || got.Header.Get("Accept") != "*/*" {
		t.Errorf("headers %v", got.Header)
	}
	if got.URL.RequestURI() != "/healthz?x=1" {
		t.Errorf("uri %q", got.URL.RequestURI())
	}
	if !got.Close {
		t.Error("keep-alive requested; probes close their connections")
	}
	// A Host header overrides the request's host; an explicit User-Agent wins.
	probeHTTP(t, srv, "/", v1.HTTPHeader{Name: "Host", Value: "example.com"}, v1.HTTPHeader{Name: "User-Agent", Value: "mine"})
	if got.Host != "example.com" || got.UserAgent() != "mine" {
		t.Errorf("host %q ua %q", got.Host, got.UserAgent())
	}
}

func TestHTTPProbeRedirects(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/local":
			http.Redirect(w, r, "/bad", http.StatusFound)
		case "/remote":
			http.Redirect(w, r, "http://0.0.0.0/", http.StatusFound)
		case "/bad":
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	if res, _ := probeHTTP(t, srv, "/local"); res != Failure {
		t.Errorf("local redirect to a failing page: %s, want failure (followed)", res)
	}
	res, out := probeHTTP(t, srv, "/remote")
	if res != Warning || !strings.HasPrefix(out, "Probe terminated redirects, Response body: ") {
		t.Errorf("redirect to another host: %s %q, want a warning", res, out)
	}
}

func TestHTTPProbeBodyLimit(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("x", 3*maxRespBodyLength)))
	}))
	defer srv.Close()
	res, out := probeHTTP(t, srv, "/")
	if res != Success || len(out) != maxRespBodyLength {
		t.Errorf("result %s, body %d bytes; want success with %d", res, len(out), maxRespBodyLength)
	}
}

func TestHTTPProbeHTTPSUnverified(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	if res, out := probeHTTP(t, srv, "/"); res != Success {
		t.Errorf("https with a self-signed certificate: %s %q", res, out)
	}
}

func TestHTTPProbeTimeoutAndRefusal(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-block }))
	defer srv.Close()
	defer close(block)
	action, host := serverAction(t, srv, "/")
	req, _ := NewRequestForHTTPGetAction(action, &v1.Container{}, host, "probe")
	if res, out, err := NewHTTPProber(false).Probe(req, 100*time.Millisecond); res != Failure || err != nil || !strings.Contains(out, "Timeout") {
		t.Errorf("slow server: %s %q %v", res, out, err)
	}
	action.Port = intstr.FromInt(freePort(t))
	req, _ = NewRequestForHTTPGetAction(action, &v1.Container{}, host, "probe")
	if res, out, _ := NewHTTPProber(false).Probe(req, time.Second); res != Failure || !strings.Contains(out, "connection refused") {
		t.Errorf("closed port: %s %q", res, out)
	}
}

func TestNamedPorts(t *testing.T) {
	c := &v1.Container{Ports: []v1.ContainerPort{{Name: "http", ContainerPort: 8080}}}
	if p, err := ResolveContainerPort(intstr.FromString("http"), c); err != nil || p != 8080 {
		t.Errorf("named port: %d %v", p, err)
	}
	if _, err := ResolveContainerPort(intstr.FromString("nope"), c); err == nil {
		t.Error("unknown port name resolved")
	}
	if _, err := ResolveContainerPort(intstr.FromInt(70000), c); err == nil {
		t.Error("port 70000 resolved")
	}
	req, err := NewRequestForHTTPGetAction(&v1.HTTPGetAction{Port: intstr.FromString("http"), Path: "/x", Scheme: v1.URISchemeHTTPS}, c, "10.88.0.7", "lifecycle")
	if err != nil || req.URL.String() != "https://10.88.0.7:8080/x" || req.UserAgent() != "kube-lifecycle/1.37" {
		t.Errorf("request %v %v", req, err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}
