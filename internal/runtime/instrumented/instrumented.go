// Package instrumented wraps any backend so that every call to it is
// measured the same way, whichever backend runs, as the kubelet's
// instrumented_services.go wraps its CRI runtime: per operation (snake_case,
// the kubelet's names where a CRI call matches), a count
// (runlet_runtime_operations_total), errors
// (runlet_runtime_operations_errors_total), a latency
// (runlet_runtime_operations_duration_seconds), and a span "runtime/<op>"
// as a child of the span the caller's ctx carries, if any.
//
// The latency is the backend's answer, not a stream's life. The kubelet's
// exec, attach and port_forward only hand out a streaming URL, so their
// latency is the set-up; runlet's run the stream in the call. So an exec is
// timed until its command runs when the caller asks to know that
// (StreamIO.Started: the prober's timed commands), and an interactive exec,
// attach, port_forward and logs with Follow, whose length the client
// decides, are counted but add no latency sample; their spans cover the
// whole stream. Events returns once its stream is set up, so it is timed,
// and its span ends, as any call's.
package instrumented

import (
	"context"
	"io"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/telemetry"
)

// New returns rt with every call measured. Capabilities pass through: the
// core reads them once and never type-asserts the backend, so the wrapper
// hides nothing it reads.
func New(rt runtime.Runtime) runtime.Runtime { return &instrumented{rt: rt} }

type instrumented struct {
	rt runtime.Runtime
}

// call is one measured call to the backend.
type call struct {
	op    string
	start time.Time
	span  trace.Span
	timed sync.Once
}

// begin counts the call and starts its span. The count is taken at the
// start (the kubelet's at the end) so that a stream shows while it lasts.
// A call outside any span, such as the PLEG's relist each second, starts
// none: it would be a trace of its own, mostly noise.
func begin(ctx context.Context, op string, attrs ...attribute.KeyValue) (context.Context, *call) {
	telemetry.RuntimeOperations.WithLabelValues(op).Inc()
	span := trace.SpanFromContext(ctx) // without one, a no-op
	if span.SpanContext().IsValid() {
		ctx, span = telemetry.StartSpan(ctx, "runtime/"+op, attrs...)
	}
	return ctx, &call{op: op, start: time.Now(), span: span}
}

// latency records the time since the call began, once.
func (c *call) latency() {
	c.timed.Do(func() {
		telemetry.RuntimeOperationDuration.WithLabelValues(c.op).Observe(time.Since(c.start).Seconds())
	})
}

// end records err, if any, and ends the span, without a latency sample.
func (c *call) end(err error) {
	if err != nil {
		telemetry.RuntimeOperationErrors.WithLabelValues(c.op).Inc()
		telemetry.RecordError(c.span, err)
	}
	c.span.End()
}

// done ends a call whose length is its latency.
func (c *call) done(err error) {
	c.latency()
	c.end(err)
}

func containerID(id string) attribute.KeyValue { return attribute.String("container.id", id) }
func sandboxID(id string) attribute.KeyValue   { return attribute.String("runlet.sandbox.id", id) }
func image(ref string) attribute.KeyValue      { return attribute.String("container.image.name", ref) }

// --- Status ---

func (i *instrumented) Capabilities() runtime.Capabilities { return i.rt.Capabilities() }

func (i *instrumented) Ping(ctx context.Context) error {
	ctx, c := begin(ctx, "ping")
	err := i.rt.Ping(ctx)
	c.done(err)
	return err
}

func (i *instrumented) Info(ctx context.Context) (runtime.HostInfo, error) {
	ctx, c := begin(ctx, "info")
	out, err := i.rt.Info(ctx)
	c.done(err)
	return out, err
}

// --- Images ---

func (i *instrumented) EnsureImage(ctx context.Context, ref string, policy runtime.PullPolicy, creds []runtime.Credential) (string, error) {
	ctx, c := begin(ctx, "ensure_image", image(ref))
	out, err := i.rt.EnsureImage(ctx, ref, policy, creds)
	c.done(err)
	return out, err
}

func (i *instrumented) ImageUser(ctx context.Context, ref string) (string, error) {
	ctx, c := begin(ctx, "image_user", image(ref))
	out, err := i.rt.ImageUser(ctx, ref)
	c.done(err)
	return out, err
}

func (i *instrumented) ImageSize(ctx context.Context, ref string) (uint64, error) {
	ctx, c := begin(ctx, "image_size", image(ref))
	out, err := i.rt.ImageSize(ctx, ref)
	c.done(err)
	return out, err
}

func (i *instrumented) LoadImage(ctx context.Context, archive io.Reader) ([]string, error) {
	ctx, c := begin(ctx, "load_image")
	out, err := i.rt.LoadImage(ctx, archive)
	c.done(err)
	return out, err
}

// --- Lifecycle ---

func (i *instrumented) CreateSandbox(ctx context.Context, cfg runtime.SandboxConfig) (runtime.Sandbox, error) {
	ctx, c := begin(ctx, "run_podsandbox", attribute.String("k8s.pod.uid", cfg.PodUID))
	out, err := i.rt.CreateSandbox(ctx, cfg)
	c.done(err)
	return out, err
}

func (i *instrumented) UpdateSandboxResources(ctx context.Context, id string, r runtime.Resources) error {
	ctx, c := begin(ctx, "update_podsandbox_resources", sandboxID(id))
	err := i.rt.UpdateSandboxResources(ctx, id, r)
	c.done(err)
	return err
}

func (i *instrumented) RemoveSandbox(ctx context.Context, id string) error {
	ctx, c := begin(ctx, "remove_podsandbox", sandboxID(id))
	err := i.rt.RemoveSandbox(ctx, id)
	c.done(err)
	return err
}

func (i *instrumented) ReleasePod(ctx context.Context, podUID string) error {
	ctx, c := begin(ctx, "release_pod", attribute.String("k8s.pod.uid", podUID))
	err := i.rt.ReleasePod(ctx, podUID)
	c.done(err)
	return err
}

func (i *instrumented) CreateContainer(ctx context.Context, sandbox string, cfg runtime.ContainerConfig) (string, error) {
	ctx, c := begin(ctx, "create_container", sandboxID(sandbox), attribute.String("k8s.container.name", cfg.Name))
	out, err := i.rt.CreateContainer(ctx, sandbox, cfg)
	c.done(err)
	return out, err
}

func (i *instrumented) StartContainer(ctx context.Context, id string) error {
	ctx, c := begin(ctx, "start_container", containerID(id))
	err := i.rt.StartContainer(ctx, id)
	c.done(err)
	return err
}

func (i *instrumented) StopContainer(ctx context.Context, id string, grace time.Duration) error {
	ctx, c := begin(ctx, "stop_container", containerID(id))
	err := i.rt.StopContainer(ctx, id, grace)
	c.done(err)
	return err
}

func (i *instrumented) RemoveContainer(ctx context.Context, id string) error {
	ctx, c := begin(ctx, "remove_container", containerID(id))
	err := i.rt.RemoveContainer(ctx, id)
	c.done(err)
	return err
}

func (i *instrumented) UpdateContainerResources(ctx context.Context, id string, r runtime.Resources) error {
	ctx, c := begin(ctx, "update_container", containerID(id))
	err := i.rt.UpdateContainerResources(ctx, id, r)
	c.done(err)
	return err
}

func (i *instrumented) StopSignalLost(ctx context.Context, id string) bool {
	ctx, c := begin(ctx, "stop_signal_lost", containerID(id))
	out := i.rt.StopSignalLost(ctx, id)
	c.done(nil)
	return out
}

// --- Observer ---

func (i *instrumented) List(ctx context.Context, f runtime.ListFilter) ([]runtime.Sandbox, []runtime.Container, error) {
	ctx, c := begin(ctx, "list")
	sbs, cs, err := i.rt.List(ctx, f)
	c.done(err)
	return sbs, cs, err
}

func (i *instrumented) InspectContainer(ctx context.Context, id string) (runtime.Container, error) {
	ctx, c := begin(ctx, "inspect_container", containerID(id))
	out, err := i.rt.InspectContainer(ctx, id)
	c.done(err)
	return out, err
}

// Events is timed, and its span ends, once the stream is set up; the stream
// runs on.
func (i *instrumented) Events(ctx context.Context) (<-chan runtime.Event, error) {
	ctx, c := begin(ctx, "events")
	out, err := i.rt.Events(ctx)
	c.done(err)
	return out, err
}

// --- Streamer ---

func (i *instrumented) Logs(ctx context.Context, id string, opts runtime.LogOptions, stdout, stderr io.Writer) error {
	ctx, c := begin(ctx, "logs", containerID(id), attribute.Bool("follow", opts.Follow))
	err := i.rt.Logs(ctx, id, opts, stdout, stderr)
	if !opts.Follow {
		c.latency()
	}
	c.end(err)
	return err
}

// Exec is timed until the command runs, or until the call fails short of
// it, when the caller asked to be told (StreamIO.Started, as the prober
// does). Otherwise, an interactive session, it is counted but not timed:
// asking on the caller's behalf is not free (podman polls the session).
func (i *instrumented) Exec(ctx context.Context, id string, cmd []string, sio runtime.StreamIO) (int, error) {
	ctx, c := begin(ctx, "exec", containerID(id))
	if started := sio.Started; started != nil {
		sio.Started = func() {
			c.latency()
			c.span.AddEvent("command started")
			started()
		}
	}
	code, err := i.rt.Exec(ctx, id, cmd, sio)
	if sio.Started != nil {
		c.latency() // no-op once started
	}
	c.end(err)
	return code, err
}

func (i *instrumented) Attach(ctx context.Context, id string, sio runtime.StreamIO) error {
	ctx, c := begin(ctx, "attach", containerID(id))
	err := i.rt.Attach(ctx, id, sio)
	c.end(err)
	return err
}

func (i *instrumented) PortForward(ctx context.Context, sandbox string, port int32, stream io.ReadWriteCloser) error {
	ctx, c := begin(ctx, "port_forward", sandboxID(sandbox), attribute.Int("port", int(port)))
	err := i.rt.PortForward(ctx, sandbox, port, stream)
	c.end(err)
	return err
}

// --- Files ---

func (i *instrumented) ContainerFiles(ctx context.Context, id string) (runtime.ContainerFiles, error) {
	ctx, c := begin(ctx, "container_files", containerID(id))
	out, err := i.rt.ContainerFiles(ctx, id)
	c.done(err)
	return out, err
}

func (i *instrumented) ReopenContainerLog(ctx context.Context, id string) error {
	ctx, c := begin(ctx, "reopen_container_log", containerID(id))
	err := i.rt.ReopenContainerLog(ctx, id)
	c.done(err)
	return err
}

// --- StatsReader ---

func (i *instrumented) Stats(ctx context.Context, ids []string) ([]runtime.ContainerStats, error) {
	ctx, c := begin(ctx, "list_container_stats", attribute.Int("containers", len(ids)))
	out, err := i.rt.Stats(ctx, ids)
	c.done(err)
	return out, err
}
