package provider

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	v1 "k8s.io/api/core/v1"
	utilexec "k8s.io/utils/exec"
)

// container finds the newest backend container of a pod's container.
func (p *Provider) container(ctx context.Context, namespace, podName, name string, previous bool) (*v1.Pod, *runtime.Container, error) {
	pod, err := p.GetPod(ctx, namespace, podName)
	if err != nil {
		return nil, nil, err
	}
	ps := p.cfg.Pods.RuntimeStatus(pod.UID)
	cur, prev := ps.Latest(name)
	if previous {
		cur = prev
	}
	if cur == nil {
		what := "container"
		if previous {
			what = "previous terminated container"
		}
		return nil, nil, errdefs.NotFoundf("%s %q in pod %q not found", what, name, podName)
	}
	return pod, cur, nil
}

// GetContainerLogs streams a container's log.
func (p *Provider) GetContainerLogs(ctx context.Context, namespace, podName, containerName string, opts api.ContainerLogOpts) (io.ReadCloser, error) {
	_, c, err := p.container(ctx, namespace, podName, containerName, opts.Previous)
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
		pw.CloseWithError(p.cfg.Runtime.Logs(ctx, c.ID, lo, pw, pw))
	}()
	return pr, nil
}

// RunInContainer runs cmd in the container (kubectl exec).
func (p *Provider) RunInContainer(ctx context.Context, namespace, podName, containerName string, cmd []string, attach api.AttachIO) error {
	_, c, err := p.container(ctx, namespace, podName, containerName, false)
	if err != nil {
		return err
	}
	if c.State != runtime.ContainerRunning {
		return fmt.Errorf("container %q in pod %q is not running", containerName, podName)
	}
	code, err := p.cfg.Runtime.Exec(ctx, c.ID, cmd, streamIO(attach))
	if err != nil {
		return err
	}
	if code != 0 {
		return exitError(code)
	}
	return nil
}

// AttachToContainer attaches to the container's main process.
func (p *Provider) AttachToContainer(ctx context.Context, namespace, podName, containerName string, attach api.AttachIO) error {
	_, c, err := p.container(ctx, namespace, podName, containerName, false)
	if err != nil {
		return err
	}
	if c.State != runtime.ContainerRunning {
		return fmt.Errorf("container %q in pod %q is not running", containerName, podName)
	}
	return p.cfg.Runtime.Attach(ctx, c.ID, streamIO(attach))
}

// PortForward connects stream to a port in the pod's network namespace.
func (p *Provider) PortForward(ctx context.Context, namespace, podName string, port int32, stream io.ReadWriteCloser) error {
	pod, err := p.GetPod(ctx, namespace, podName)
	if err != nil {
		return err
	}
	sb := p.cfg.Pods.RuntimeStatus(pod.UID).Sandbox()
	if sb == nil {
		return fmt.Errorf("pod %q has no running sandbox", podName)
	}
	return p.cfg.Runtime.PortForward(ctx, sb.ID, port, stream)
}

func streamIO(a api.AttachIO) runtime.StreamIO {
	sio := runtime.StreamIO{Stdin: a.Stdin(), Stdout: a.Stdout(), Stderr: a.Stderr(), TTY: a.TTY()}
	if a.TTY() && a.Resize() != nil {
		ch := make(chan runtime.TermSize, 1)
		go func() {
			defer close(ch)
			for sz := range a.Resize() {
				ch <- runtime.TermSize{Width: sz.Width, Height: sz.Height}
			}
		}()
		sio.Resize = ch
	}
	return sio
}

// exitError carries a command's exit code back through the framework's
// remotecommand server, so `kubectl exec` exits with the same code.
func exitError(code int) error {
	return utilexec.CodeExitError{Err: fmt.Errorf("command terminated with exit code %d", code), Code: code}
}
