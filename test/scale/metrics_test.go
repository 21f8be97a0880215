package scale

import (
	"bytes"
	"context"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// apiserverReading is what the apiserver's /metrics says at one moment: its
// requests so far (apiserver_request_total) and the watches open now
// (apiserver_longrunning_requests, verb WATCH), each by "VERB resource",
// resource with its subresource. Requests to paths that are no resource
// (/metrics, /healthz) are left out: the harness's own scrapes are there.
type apiserverReading struct {
	requests map[string]float64
	watches  map[string]float64
}

func (h *harness) scrapeAPIServer() apiserverReading {
	h.t.Helper()
	raw, err := h.c.Client.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		h.t.Fatalf("apiserver /metrics: %v", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		h.t.Fatalf("apiserver /metrics: %v", err)
	}
	r := apiserverReading{requests: map[string]float64{}, watches: map[string]float64{}}
	for _, m := range families["apiserver_request_total"].GetMetric() {
		if k := requestKey(m); k != "" {
			r.requests[k] += m.GetCounter().GetValue()
		}
	}
	for _, m := range families["apiserver_longrunning_requests"].GetMetric() {
		if k := requestKey(m); strings.HasPrefix(k, "WATCH ") {
			r.watches[k] += m.GetGauge().GetValue()
		}
	}
	return r
}

// requestKey is "VERB resource[/subresource]"; "" for non-resource paths.
func requestKey(m *dto.Metric) string {
	var verb, resource, sub string
	for _, l := range m.GetLabel() {
		switch l.GetName() {
		case "verb":
			verb = l.GetValue()
		case "resource":
			resource = l.GetValue()
		case "subresource":
			sub = l.GetValue()
		}
	}
	if resource == "" {
		return ""
	}
	if sub != "" {
		resource += "/" + sub
	}
	return verb + " " + resource
}

// delta is after − before, key by key, without the keys that did not move.
func delta(before, after map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}
