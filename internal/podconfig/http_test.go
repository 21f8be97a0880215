package podconfig

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
)

// manifestServer serves whatever body and status the test sets, and
// records the Authorization header of the last request.
type manifestServer struct {
	mu     sync.Mutex
	body   string
	status int
	auth   string
}

func (s *manifestServer) set(status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body = status, body
}

func (s *manifestServer) lastAuth() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.auth
}

func (s *manifestServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.auth = r.Header.Get("Authorization")
	w.WriteHeader(s.status)
	_, _ = w.Write([]byte(s.body))
}

const podList = `{"apiVersion":"v1","kind":"PodList","items":[
 {"metadata":{"name":"x"},"spec":{"containers":[{"name":"c","image":"busybox"}]}},
 {"metadata":{"name":"y","namespace":"kube-system"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}]}`

func newHTTPSource(t *testing.T, srv *manifestServer) (*httpSource, chan []*v1.Pod, *logtest.Hook) {
	t.Helper()
	ts := httptest.NewServer(srv) // listens on 127.0.0.1
	t.Cleanup(ts.Close)
	h, err := ParseURLHeaders([]string{"Authorization:Bearer s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	ch := make(chan []*v1.Pod, 1)
	s := &httpSource{cfg: HTTPSourceConfig{URL: ts.URL + "/pods", Header: h, NodeName: "n1", Updates: ch, Log: log, Client: ts.Client(),
		Recorder: record.NewFakeRecorder(100)}}
	return s, ch, hook
}

// pollOnce polls and returns the snapshot sent, or nil if none was.
func pollOnce(s *httpSource, ch chan []*v1.Pod) []*v1.Pod {
	s.poll(context.Background())
	select {
	case pods := <-ch:
		return pods
	default:
		return nil
	}
}

func TestHTTPSourcePodAndList(t *testing.T) {
	srv := &manifestServer{}
	s, ch, _ := newHTTPSource(t, srv)

	srv.set(http.StatusOK, nginxManifest)
	pods := pollOnce(s, ch)
	if names(pods) != "web-n1" || pods[0].Annotations[ConfigHashAnnotation] == "" {
		t.Fatalf("single pod: got %q", names(pods))
	}
	if got := srv.lastAuth(); got != "Bearer s3cret" {
		t.Errorf("Authorization header = %q, want the --manifest-url-header value", got)
	}
	// Unchanged content resends the same snapshot, without parsing again.
	if again := pollOnce(s, ch); names(again) != "web-n1" || again[0] != pods[0] {
		t.Errorf("unchanged body: got %q, want the very same pods resent", names(again))
	}

	srv.set(http.StatusOK, podList)
	pods = pollOnce(s, ch)
	if names(pods) != "x-n1,y-n1" {
		t.Fatalf("pod list: got %q", names(pods))
	}
	for _, p := range pods {
		if p.Name == "y-n1" && p.Namespace != "kube-system" {
			t.Errorf("y namespace = %q", p.Namespace)
		}
	}
}

func TestHTTPSourceErrorsKeepLastSnapshot(t *testing.T) {
	srv := &manifestServer{}
	s, ch, hook := newHTTPSource(t, srv)
	srv.set(http.StatusOK, podList)
	if pods := pollOnce(s, ch); names(pods) != "x-n1,y-n1" {
		t.Fatalf("got %q", names(pods))
	}
	for what, set := range map[string]func(){
		"server error": func() { srv.set(http.StatusInternalServerError, "boom") },
		"bad body":     func() { srv.set(http.StatusOK, "{{{ not yaml") },
		"invalid pod": func() {
			srv.set(http.StatusOK, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"z"},"spec":{"containers":[]}}`)
		},
	} {
		hook.Reset()
		set()
		if pods := pollOnce(s, ch); pods != nil {
			t.Errorf("%s: sent %q, want nothing (the mux keeps the last good snapshot)", what, names(pods))
		}
		if e := hook.LastEntry(); e == nil || e.Level > logrus.DebugLevel || e.Data[logrus.ErrorKey] == nil {
			t.Errorf("%s: no log line with the error", what)
		}
	}
	// An empty body means no static pods, as on the kubelet.
	srv.set(http.StatusOK, "")
	if pods := pollOnce(s, ch); pods == nil || len(pods) != 0 {
		t.Errorf("empty body: sent %v, want an empty snapshot", pods)
	}
}

func TestRunHTTPSource(t *testing.T) {
	srv := &manifestServer{}
	srv.set(http.StatusOK, nginxManifest)
	s, _, _ := newHTTPSource(t, srv)
	ch := make(chan []*v1.Pod)
	cfg := s.cfg
	cfg.Updates, cfg.Period = ch, 20*time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); RunHTTPSource(ctx, cfg) }()
	defer func() { cancel(); <-done }()
	waitFor(t, ch, "web-n1")
	srv.set(http.StatusOK, podList)
	waitFor(t, ch, "x-n1,y-n1")
}

// TestHTTPSourceNodeEvents: each new problem becomes one Warning event on
// the node naming the URL; a problem that repeats is not recorded again,
// and one that comes back after a good read is.
func TestHTTPSourceNodeEvents(t *testing.T) {
	srv := &manifestServer{}
	s, ch, _ := newHTTPSource(t, srv)
	rec := s.cfg.Recorder.(*record.FakeRecorder)
	events := func() []string {
		var out []string
		for len(rec.Events) > 0 {
			out = append(out, <-rec.Events)
		}
		return out
	}
	url := s.cfg.URL
	steps := []struct {
		status int
		body   string
		want   []string
	}{
		{http.StatusOK, podList, nil},
		{http.StatusInternalServerError, "boom", []string{"Warning FailedManifestURL Static pods could not be read from " + url +
			", the last good ones are kept: " + url + ": 500 Internal Server Error"}},
		{http.StatusInternalServerError, "boom", nil},
		{http.StatusOK, "{{{ not yaml", []string{"Warning InvalidManifest Static pods from " + url + " ignored, the last good ones are kept: "}},
		{http.StatusOK, "{{{ not yaml", nil},
		{http.StatusOK, strings.Repeat("x", maxConfigLength+1), []string{"Warning FailedManifestURL Static pods could not be read from " + url +
			", the last good ones are kept: " + url + ": body larger than the 10485760-byte limit of a manifest"}},
		{http.StatusOK, podList, nil},
		{http.StatusInternalServerError, "boom", []string{"Warning FailedManifestURL "}},
		{http.StatusOK, "", []string{"Warning InvalidManifest Static pods from " + url + " removed: zero-length data received"}},
	}
	for i, st := range steps {
		srv.set(st.status, st.body)
		pollOnce(s, ch)
		got := events()
		if len(got) != len(st.want) {
			t.Fatalf("step %d: events %q, want %d", i, got, len(st.want))
		}
		for j := range got {
			if !strings.HasPrefix(got[j], st.want[j]) {
				t.Errorf("step %d: event %q\nwant %q...", i, got[j], st.want[j])
			}
		}
	}
}
