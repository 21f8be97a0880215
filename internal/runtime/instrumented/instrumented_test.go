package instrumented_test

import (
	"context"
	"errors"
	"io"
	"reflect"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/instrumented"
	"github.com/runlet/runlet/internal/runtime/runtimefake"
	"github.com/runlet/runlet/internal/runtime/runtimetest"
	"github.com/runlet/runlet/internal/telemetry"
)

// TestConformance holds the wrapped fake to the suite every backend passes:
// the wrapper changes nothing a backend answers, its capabilities included.
func TestConformance(t *testing.T) {
	store := runtimefake.New()
	store.SetImages() // only the suite's loaded image is present
	runtimetest.Run(t, func(_ *testing.T, owner string) runtime.Runtime {
		return instrumented.New(store.Reopen(owner))
	})
}

// ops reads one operation's figures: calls, errors and latency samples.
type ops struct{ calls, errors, timed float64 }

func read(t *testing.T, op string) ops {
	t.Helper()
	h, err := telemetry.RuntimeOperationDuration.GetMetricWithLabelValues(op)
	if err != nil {
		t.Fatal(err)
	}
	var m dto.Metric
	if err := h.(prometheus.Metric).Write(&m); err != nil {
		t.Fatal(err)
	}
	return ops{
		calls:  testutil.ToFloat64(telemetry.RuntimeOperations.WithLabelValues(op)),
		errors: testutil.ToFloat64(telemetry.RuntimeOperationErrors.WithLabelValues(op)),
		timed:  float64(m.GetHistogram().GetSampleCount()),
	}
}

// since is what op gained since before.
func since(t *testing.T, op string, before ops) ops {
	t.Helper()
	now := read(t, op)
	return ops{now.calls - before.calls, now.errors - before.errors, now.timed - before.timed}
}

func TestCallsAreCountedByOperation(t *testing.T) {
	ctx := context.Background()
	fake := runtimefake.New()
	rt := instrumented.New(fake)

	before := read(t, "run_podsandbox")
	if _, err := rt.CreateSandbox(ctx, runtime.SandboxConfig{PodUID: "u1", Namespace: "ns", Name: "p"}); err != nil {
		t.Fatal(err)
	}
	if got := since(t, "run_podsandbox", before); got != (ops{1, 0, 1}) {
		t.Errorf("run_podsandbox gained %+v; want a call, timed, no error", got)
	}

	fake.Fail("StartContainer", errors.New("boom"))
	before = read(t, "start_container")
	if err := rt.StartContainer(ctx, "c1"); err == nil {
		t.Fatal("StartContainer succeeded; want the injected error")
	}
	if got := since(t, "start_container", before); got != (ops{1, 1, 1}) {
		t.Errorf("start_container gained %+v; want a call, timed, an error", got)
	}

	before = read(t, "list")
	if _, _, err := rt.List(ctx, runtime.ListFilter{}); err != nil {
		t.Fatal(err)
	}
	if got := since(t, "list", before); got != (ops{1, 0, 1}) {
		t.Errorf("list gained %+v", got)
	}

	// The caller's errors come back as the backend returned them.
	fake.Fail("InspectContainer", runtime.ErrNotFound)
	if _, err := rt.InspectContainer(ctx, "x"); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("InspectContainer = %v; want ErrNotFound", err)
	}

	if !reflect.DeepEqual(rt.Capabilities(), fake.Capabilities()) {
		t.Errorf("Capabilities = %+v; want the backend's %+v", rt.Capabilities(), fake.Capabilities())
	}
}

// Streams whose length the client decides are counted but not timed; an
// exec is timed until its command runs when the caller asks to know.
func TestStreamsAreCountedNotTimed(t *testing.T) {
	ctx := context.Background()
	fake := runtimefake.New()
	rt := instrumented.New(fake)
	sb, err := rt.CreateSandbox(ctx, runtime.SandboxConfig{PodUID: "u1", Namespace: "ns", Name: "p"})
	if err != nil {
		t.Fatal(err)
	}
	id, err := rt.CreateContainer(ctx, sb.ID, runtime.ContainerConfig{Name: "c", Image: "img"})
	if err != nil {
		t.Fatal(err)
	}
	fake.HandleExec(func(context.Context, string, []string, runtime.StreamIO) (int, error) { return 0, nil })

	before := read(t, "exec")
	if _, err := rt.Exec(ctx, id, []string{"sh"}, runtime.StreamIO{}); err != nil {
		t.Fatal(err)
	}
	if got := since(t, "exec", before); got != (ops{1, 0, 0}) {
		t.Errorf("an interactive exec gained %+v; want a call, untimed", got)
	}
	before, started := read(t, "exec"), 0
	if _, err := rt.Exec(ctx, id, []string{"true"}, runtime.StreamIO{Started: func() { started++ }}); err != nil {
		t.Fatal(err)
	}
	if got := since(t, "exec", before); got != (ops{1, 0, 1}) || started != 1 {
		t.Errorf("a timed exec gained %+v, its Started called %d times; want a call, timed, Started once", got, started)
	}

	before = read(t, "logs")
	if err := rt.Logs(ctx, id, runtime.LogOptions{Follow: true}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := rt.Logs(ctx, id, runtime.LogOptions{}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if got := since(t, "logs", before); got != (ops{2, 0, 1}) {
		t.Errorf("logs gained %+v; want two calls, only the one without follow timed", got)
	}

	before = read(t, "attach")
	if err := rt.Attach(ctx, id, runtime.StreamIO{}); err == nil {
		t.Fatal("the fake attached")
	}
	if got := since(t, "attach", before); got != (ops{1, 1, 0}) {
		t.Errorf("attach gained %+v; want a call, an error, untimed", got)
	}
}

// A call's span is a child of the caller's and carries its error.
func TestSpansAreChildrenOfTheCallers(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	fake := runtimefake.New()
	fake.Fail("StopContainer", errors.New("boom"))
	rt := instrumented.New(fake)
	ctx, parent := telemetry.StartSpan(context.Background(), "sync")
	_ = rt.StopContainer(ctx, "c1", 0)
	parent.End()

	var child sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == "runtime/stop_container" {
			child = s
		}
	}
	if child == nil {
		t.Fatalf("no span runtime/stop_container among %d", len(rec.Ended()))
	}
	if got, want := child.Parent().SpanID(), parent.SpanContext().SpanID(); got != want {
		t.Errorf("runtime/stop_container's parent is %s; want the caller's %s", got, want)
	}
	if child.Status().Code != codes.Error || child.Status().Description != "boom" {
		t.Errorf("runtime/stop_container's status is %+v; want the error", child.Status())
	}

	// A call outside any span (a relist) starts no trace of its own.
	n := len(rec.Ended())
	if _, _, err := rt.List(context.Background(), runtime.ListFilter{}); err != nil {
		t.Fatal(err)
	}
	if got := len(rec.Ended()); got != n {
		t.Errorf("a call without a parent span ended %d spans", got-n)
	}
}
