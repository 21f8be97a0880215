package telemetry

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// The sync a provider call causes joins the call's trace, once; later syncs
// start traces of their own.
func TestPodTraceCarriedOnce(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	_, create := StartSpan(context.Background(), "provider.CreatePod")
	RememberPodTrace("uid-1", create)
	create.End()
	_, sync := StartSpan(TakePodTrace(context.Background(), "uid-1"), "syncloop.SyncPod")
	sync.End()
	_, later := StartSpan(TakePodTrace(context.Background(), "uid-1"), "syncloop.SyncPod")
	later.End()

	spans := rec.Ended()
	if len(spans) != 3 {
		t.Fatalf("%d spans, want 3", len(spans))
	}
	if spans[1].SpanContext().TraceID() != spans[0].SpanContext().TraceID() || spans[1].Parent().SpanID() != spans[0].SpanContext().SpanID() {
		t.Errorf("the first sync is not the create's child: %v under %v", spans[1].Parent(), spans[0].SpanContext())
	}
	if spans[2].SpanContext().TraceID() == spans[0].SpanContext().TraceID() {
		t.Error("a later sync joined the create's trace too")
	}
	ForgetPodTrace("uid-1")
	RememberPodTrace("uid-2", trace.SpanFromContext(context.Background())) // no span: nothing kept
	if ctx := TakePodTrace(context.Background(), "uid-2"); trace.SpanContextFromContext(ctx).IsValid() {
		t.Error("an invalid span was kept")
	}
}
