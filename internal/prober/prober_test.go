package prober

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/runlet/runlet/internal/prober/results"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/tools/record"
)

func TestProberEvents(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, "http://0.0.0.0/", http.StatusFound)
		case "/bad":
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	p, _ := strconv.Atoi(port)
	rec := record.NewFakeRecorder(10)
	pb := newProber(nil, rec, logrus.StandardLogger())
	pod := probePod(v1.Container{Name: "c"})
	c := &v1.Container{Name: "c", Ports: []v1.ContainerPort{{Name: "web", ContainerPort: int32(p)}}}
	check := func(typ ProbeType, path string, want results.Result, event string) {
		spec := &v1.Probe{ProbeHandler: v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: path, Port: intstr.FromString("web")}}}
		c.LivenessProbe, c.ReadinessProbe = spec, spec
		got, err := pb.probe(context.Background(), typ, pod, "127.0.0.1", c, "id")
		if got != want || err != nil {
			t.Errorf("%s %s: %v %v, want %v", typ, path, got, err, want)
		}
		select {
		case e := <-rec.Events:
			if !strings.HasPrefix(e, event) {
				t.Errorf("%s %s: event %q, want %q", typ, path, e, event)
			}
		default:
			if event != "" {
				t.Errorf("%s %s: no event, want %q", typ, path, event)
			}
		}
	}
	check(Readiness, "/", results.Success, "")
	check(Liveness, "/bad", results.Failure, "Warning Unhealthy Liveness probe failed: HTTP probe failed with statuscode: 503")
	check(Liveness, "/away", results.Success, "Warning ProbeWarning Liveness probe warning: Probe terminated redirects, Response body: ")

	// A probe that cannot even be built (an unknown named port) errors.
	c.ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromString("nope")}}}
	if got, err := pb.probe(context.Background(), Readiness, pod, "127.0.0.1", c, "id"); got != results.Failure || err == nil {
		t.Errorf("unknown port: %v %v", got, err)
	}
	if e := <-rec.Events; !strings.Contains(e, `Readiness probe errored and resulted in unknown state: port "nope" not found`) {
		t.Errorf("event %q", e)
	}
}

func TestExecProbeExpandsStaticEnv(t *testing.T) {
	h := newHarness(t)
	var got []string
	h.rt.HandleExec(func(_ context.Context, _ string, cmd []string, _ runtime.StreamIO) (int, error) {
		got = cmd
		return 0, nil
	})
	c := &v1.Container{Name: "c", Env: []v1.EnvVar{{Name: "FILE", Value: "/tmp/ok"}},
		ReadinessProbe: &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"cat", "$(FILE)", "$(MISSING)"}}}}}
	if r, err := h.m.prober.probe(context.Background(), Readiness, probePod(*c), "", c, h.ids[0]); r != results.Success || err != nil {
		t.Fatalf("%v %v", r, err)
	}
	if strings.Join(got, " ") != "cat /tmp/ok $(MISSING)" {
		t.Fatalf("command %q", got)
	}
}
