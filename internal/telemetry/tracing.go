// Package telemetry sets up OpenTelemetry tracing and the Prometheus
// metrics runlet exports about itself.
package telemetry

import (
	"context"
	"os"
	"sync"

	vktrace "github.com/virtual-kubelet/virtual-kubelet/trace"
	vkotel "github.com/virtual-kubelet/virtual-kubelet/trace/opentelemetry"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

const tracerName = "github.com/runlet/runlet"

// SetupTracing exports spans over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT
// (or the traces-specific variable) is set, and leaves tracing off otherwise.
// The returned function flushes and stops the exporter.
func SetupTracing(ctx context.Context, nodeName, version string) (func(context.Context) error, error) {
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		return func(context.Context) error { return nil }, nil
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, err
	}
	res := resource.NewWithAttributes(semconv.SchemaURL,
		semconv.ServiceName("runlet"), semconv.ServiceVersion(version),
		attribute.String("k8s.node.name", nodeName))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	// The framework's own spans (pod controller, node controller) go the same way.
	vktrace.T = vkotel.Adapter{}
	return tp.Shutdown, nil
}

// StartSpan starts a span named name.
func StartSpan(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return otel.Tracer(tracerName).Start(ctx, name, trace.WithAttributes(attrs...))
}

// StartPodSpan starts a span carrying the pod's identity.
func StartPodSpan(ctx context.Context, name string, pod *v1.Pod) (context.Context, trace.Span) {
	return StartSpan(ctx, name,
		attribute.String("k8s.namespace.name", pod.Namespace),
		attribute.String("k8s.pod.name", pod.Name),
		attribute.String("k8s.pod.uid", string(pod.UID)))
}

// podTraces holds, per pod UID, the span of the newest change the API made
// to the pod (the provider's CreatePod, UpdatePod or DeletePod): the pod
// config's channels carry pods, not contexts, so the sync that change causes
// finds its parent here.
var podTraces sync.Map // types.UID -> trace.SpanContext

// RememberPodTrace keeps span as the parent of the pod's next sync.
func RememberPodTrace(uid types.UID, span trace.Span) {
	if sc := span.SpanContext(); sc.IsValid() {
		podTraces.Store(uid, sc)
	}
}

// TakePodTrace returns ctx with the span RememberPodTrace kept for the pod as
// its parent, once: the periodic syncs after it are traces of their own.
func TakePodTrace(ctx context.Context, uid types.UID) context.Context {
	if sc, ok := podTraces.LoadAndDelete(uid); ok {
		return trace.ContextWithSpanContext(ctx, sc.(trace.SpanContext))
	}
	return ctx
}

// ForgetPodTrace drops what is kept for a pod that is gone.
func ForgetPodTrace(uid types.UID) { podTraces.Delete(uid) }

// RecordError marks the span failed.
func RecordError(span trace.Span, err error) {
	if err == nil {
		return
	}
	span.RecordError(err)
	span.SetStatus(codes.Error, err.Error())
}
