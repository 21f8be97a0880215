// Package streaming answers the kubelet API's container and node paths:
// logs (also --previous), exec, attach and port-forward through the
// backend's streaming role, and /stats/summary and /metrics/resource. Pods
// are found as the kubelet finds them: an API pod by name with its newest
// status, or a static pod by its mirror pod's name.
package streaming

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	utilexec "k8s.io/utils/exec"
)

// Pods finds an API pod with its newest status (the kubelet core).
type Pods interface {
	GetPodByName(namespace, name string) (*v1.Pod, bool)
}

// StaticPods finds a static pod by its mirror pod's name.
type StaticPods interface {
	StaticPod(namespace, name string) (*v1.Pod, bool)
}

// RuntimeStatuses gives the backend's newest view of a pod.
type RuntimeStatuses interface {
	RuntimeStatus(uid types.UID) *runtime.PodStatus
}

// Config is what a Server answers from.
type Config struct {
	Pods    Pods
	Static  StaticPods // optional
	Backend RuntimeStatuses
	Runtime runtime.Streamer
	Stats   StatsSource // optional: without it the stats paths answer NotFound
}

// Server implements the kubelet API paths virtual-kubelet routes.
type Server struct{ cfg Config }

// New returns a Server.
func New(cfg Config) *Server { return &Server{cfg: cfg} }

// lookupPod finds a pod the kubelet API may address: an API pod, or a
// static pod by its mirror pod's name (which is what kubectl names).
func (s *Server) lookupPod(_ context.Context, namespace, podName string) (*v1.Pod, error) {
	if pod, ok := s.cfg.Pods.GetPodByName(namespace, podName); ok {
		return pod, nil
	}
	if s.cfg.Static != nil {
		if sp, ok := s.cfg.Static.StaticPod(namespace, podName); ok {
			return sp, nil
		}
	}
	return nil, errdefs.NotFoundf("pod %s/%s is not known to runlet", namespace, podName)
}

// container finds the newest backend container of a pod's container.
func (s *Server) container(ctx context.Context, namespace, podName, name string, previous bool) (*v1.Pod, *runtime.Container, error) {
	pod, err := s.lookupPod(ctx, namespace, podName)
	if err != nil {
		return nil, nil, err
	}
	ps := s.cfg.Backend.RuntimeStatus(pod.UID)
	cur, prev := ps.Latest(name)
	if previous {
		cur = prev
		if last := lastTerminated(pod, ps, name); last != nil {
			cur = last
		}
	}
	if cur == nil {
		what := "container"
		if previous {
			what = "previous terminated container"
		}
		// Invalid input (400), as the kubelet answers: the apiserver passes
		// the message on, while a 404 reaches kubectl as a bare NotFound.
		return nil, nil, errdefs.InvalidInputf("%s %q in pod %q not found", what, name, podName)
	}
	return pod, cur, nil
}

// GetContainerLogs streams a container's log.
func (s *Server) GetContainerLogs(ctx context.Context, namespace, podName, containerName string, opts api.ContainerLogOpts) (io.ReadCloser, error) {
	_, c, err := s.container(ctx, namespace, podName, containerName, opts.Previous)
	if err != nil {
		return nil, err
	}
	lo := runtime.LogOptions{Follow: opts.Follow, Timestamps: opts.Timestamps, TailLines: -1, LimitBytes: int64(opts.LimitBytes)}
	if opts.Tail > 0 {
		lo.TailLines = int64(opts.Tail)
	}
	if opts.SinceSeconds > 0 {
		lo.Since = time.Now().Add(-time.Duration(opts.SinceSeconds) * time.Second)
	}
	if !opts.SinceTime.IsZero() {
		lo.Since = opts.SinceTime
	}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(s.cfg.Runtime.Logs(ctx, c.ID, lo, pw, pw))
	}()
	return pr, nil
}

// RunInContainer runs cmd in the container (kubectl exec).
func (s *Server) RunInContainer(ctx context.Context, namespace, podName, containerName string, cmd []string, attach api.AttachIO) error {
	c, err := s.runningContainer(ctx, namespace, podName, containerName)
	if err != nil {
		return err
	}
	done := make(chan struct{})
	defer close(done)
	code, err := s.cfg.Runtime.Exec(ctx, c.ID, cmd, streamIO(attach, done))
	if err != nil {
		return err
	}
	if code != 0 {
		return exitError(code)
	}
	return nil
}

// AttachToContainer attaches to the container's main process.
func (s *Server) AttachToContainer(ctx context.Context, namespace, podName, containerName string, attach api.AttachIO) error {
	c, err := s.runningContainer(ctx, namespace, podName, containerName)
	if err != nil {
		return err
	}
	done := make(chan struct{})
	defer close(done)
	return s.cfg.Runtime.Attach(ctx, c.ID, streamIO(attach, done))
}

// runningContainer finds the container exec and attach act on: only a
// running one will do.
func (s *Server) runningContainer(ctx context.Context, namespace, podName, containerName string) (*runtime.Container, error) {
	_, c, err := s.container(ctx, namespace, podName, containerName, false)
	if err != nil {
		return nil, err
	}
	if c.State != runtime.ContainerRunning {
		return nil, fmt.Errorf("container %q in pod %q is not running", containerName, podName)
	}
	return c, nil
}

// PortForward connects stream to a port in the pod's network namespace.
func (s *Server) PortForward(ctx context.Context, namespace, podName string, port int32, stream io.ReadWriteCloser) error {
	pod, err := s.lookupPod(ctx, namespace, podName)
	if err != nil {
		return err
	}
	sb := s.cfg.Backend.RuntimeStatus(pod.UID).Sandbox()
	if sb == nil {
		return fmt.Errorf("pod %q has no running sandbox", podName)
	}
	return s.cfg.Runtime.PortForward(ctx, sb.ID, port, stream)
}

// streamIO adapts the framework's streams; done ends the resize relay.
func streamIO(a api.AttachIO, done <-chan struct{}) runtime.StreamIO {
	sio := runtime.StreamIO{Stdin: a.Stdin(), Stdout: a.Stdout(), Stderr: a.Stderr(), TTY: a.TTY()}
	if a.TTY() && a.Resize() != nil {
		ch := make(chan runtime.TermSize, 1)
		go relayResize(a.Resize(), ch, done)
		sio.Resize = ch
	}
	return sio
}

// relayResize forwards terminal sizes until the session ends. The framework
// never closes its resize channel, and once the client's resize stream ends
// it feeds zero sizes without pause, so a zero size ends the relay as well.
func relayResize(in <-chan api.TermSize, out chan<- runtime.TermSize, done <-chan struct{}) {
	defer close(out)
	for {
		var sz api.TermSize
		select {
		case <-done:
			return
		case sz = <-in:
		}
		if sz.Width == 0 && sz.Height == 0 {
			return
		}
		select {
		case <-done:
			return
		case out <- runtime.TermSize{Width: sz.Width, Height: sz.Height}:
		}
	}
}

// exitError carries a command's exit code back through the framework's
// remotecommand server, so `kubectl exec` exits with the same code.
func exitError(code int) error {
	return utilexec.CodeExitError{Err: fmt.Errorf("command terminated with exit code %d", code), Code: code}
}
