package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
	v1 "k8s.io/api/core/v1"
)

// otlpReceiver takes spans over OTLP/HTTP (protobuf), as a collector on 127.0.0.1 would.
type otlpReceiver struct {
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	req := &collectortrace.ExportTraceServiceRequest{}
	if err != nil || r.URL.Path != "/v1/traces" || proto.Unmarshal(body, req) != nil {
		http.Error(w, "not an OTLP trace export", http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			o.spans = append(o.spans, ss.Spans...)
		}
	}
	o.mu.Unlock()
	b, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

// trace returns the names of the spans of the trace whose root-most span is the provider's
// CreatePod of the pod uid.
func (o *otlpReceiver) trace(uid string) map[string]bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	var id []byte
	for _, s := range o.spans {
		if s.Name == "provider.CreatePod" && attr(s, "k8s.pod.uid") == uid {
			id = s.TraceId
		}
	}
	names := map[string]bool{}
	for _, s := range o.spans {
		if id != nil && string(s.TraceId) == string(id) {
			names[s.Name] = true
		}
	}
	return names
}

func attr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}

// TestTracesFollowAPod: with the OpenTelemetry SDK's standard variable set, a pod's start is one
// trace, from virtual-kubelet's CreatePod through the sync to each backend call.
func TestTracesFollowAPod(t *testing.T) {
	t.Parallel()
	recv := &otlpReceiver{}
	srv := httptest.NewServer(recv)
	t.Cleanup(srv.Close)
	r := framework.StartRunlet(t, framework.RunletOptions{Env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + srv.URL}})
	ns := framework.Namespace(t)
	pod := framework.CreatePod(t, framework.PodFor(r.NodeName, ns, "traced", framework.Sleeper("c")))
	framework.WaitForPodPhase(t, ns, pod.Name, v1.PodRunning, time.Minute)
	want := []string{"provider.CreatePod", "syncloop.SyncPod", "runtime/run_podsandbox", "runtime/create_container", "runtime/start_container"}
	var got map[string]bool
	framework.Eventually(t, 60*time.Second, "the pod's start as one trace", func() (bool, error) {
		got = recv.trace(string(pod.UID))
		for _, n := range want {
			if !got[n] {
				return false, nil
			}
		}
		return true, nil
	})
}
