package podman

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
)

// Logs copies a slice of a container's log. The k8s-file log on disk is read
// whenever runlet can see it, as the kubelet reads it: the reader follows
// the log across runlet's rotations without losing a line (podman 4.3's
// follower reopens a rotated log without reading the old file to its end),
// keeps the nanoseconds the API cuts to whole seconds, and shows a last line
// without its newline ("echo -n DONE"), which a termination message needs.
// The API serves the log only when the file is out of reach.
func (b *Backend) Logs(ctx context.Context, id string, opts runtime.LogOptions, stdout, stderr io.Writer) error {
	if used, err := b.logFileLogs(ctx, id, opts, stdout, stderr); used {
		return err
	}
	q := url.Values{"stdout": {"true"}, "stderr": {"true"},
		"follow": {strconv.FormatBool(opts.Follow)}, "timestamps": {strconv.FormatBool(opts.Timestamps)}}
	if opts.TailLines >= 0 {
		q.Set("tail", strconv.FormatInt(opts.TailLines, 10))
	}
	if !opts.Since.IsZero() {
		q.Set("since", fmt.Sprintf("%d.%09d", opts.Since.Unix(), opts.Since.Nanosecond()))
	}
	body, err := b.client.Logs(ctx, id, q)
	if err != nil {
		return wrapf(err, "logs of container %s", shortID(id))
	}
	defer body.Close()
	if opts.LimitBytes > 0 {
		lim := &byteLimit{left: opts.LimitBytes}
		stdout, stderr = lim.wrap(stdout), lim.wrap(stderr)
	}
	err = libpod.Demux(body, stdout, stderr)
	if errors.Is(err, errLimitReached) || ctx.Err() != nil {
		return nil
	}
	return err
}

var errLimitReached = errors.New("log byte limit reached")

// byteLimit caps the bytes written to several writers together.
type byteLimit struct {
	mu   sync.Mutex
	left int64
}

type limitedWriter struct {
	lim *byteLimit
	w   io.Writer
}

func (l *byteLimit) wrap(w io.Writer) io.Writer {
	if w == nil {
		return nil
	}
	return &limitedWriter{lim: l, w: w}
}

func (lw *limitedWriter) Write(p []byte) (int, error) {
	lw.lim.mu.Lock()
	defer lw.lim.mu.Unlock()
	if lw.lim.left <= 0 {
		return 0, errLimitReached
	}
	cut := p
	if int64(len(cut)) > lw.lim.left {
		cut = cut[:lw.lim.left]
	}
	n, err := lw.w.Write(cut)
	lw.lim.left -= int64(n)
	if err == nil && n < len(p) {
		err = errLimitReached
	}
	return n, err
}

// Exec runs cmd in the container and returns its exit code.
func (b *Backend) Exec(ctx context.Context, id string, cmd []string, sio runtime.StreamIO) (int, error) {
	execID, err := b.client.ExecCreate(ctx, id, libpod.ExecConfig{
		AttachStdin: sio.Stdin != nil, AttachStdout: sio.Stdout != nil,
		AttachStderr: sio.Stderr != nil && !sio.TTY, Tty: sio.TTY, Cmd: cmd,
	})
	if err != nil {
		return -1, wrapf(err, "exec in container %s", shortID(id))
	}
	conn, err := b.client.ExecStart(ctx, execID, sio.TTY)
	if err != nil {
		return -1, wrapf(err, "starting exec in container %s", shortID(id))
	}
	started := b.watchExecStart(ctx, execID, sio.Started)
	resize := func(s runtime.TermSize) error { return b.client.ExecResize(ctx, execID, s.Width, s.Height) }
	err = pipe(ctx, conn, sio, resize)
	started(err == nil)
	if err != nil {
		return -1, wrapf(err, "exec in container %s", shortID(id))
	}
	return b.execExitCode(ctx, execID)
}

// watchExecStart calls notify once the exec session's process runs. podman
// answers the start request while conmon is still setting the session up
// (runc exec can take seconds on a busy host), so the process is running
// once podman reports its PID; a timeout counted from there counts the
// command, as the CRI runtimes count ExecSync's. The returned func stops the
// watch; given true (the output ended normally) it calls notify if the watch
// had not yet: the command did run.
func (b *Backend) watchExecStart(ctx context.Context, execID string, notify func()) func(ran bool) {
	if notify == nil {
		return func(bool) {}
	}
	var once sync.Once
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for delay := 5 * time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
			if st, err := b.client.ExecInspect(ctx, execID); err == nil && st.Pid != 0 {
				once.Do(notify)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(delay):
			}
		}
	}()
	return func(ran bool) {
		cancel()
		<-done
		if ran {
			once.Do(notify)
		}
	}
}

// execExitCode reads the exit code; right after the stream ends podman may
// still report the session as running for a moment.
func (b *Backend) execExitCode(ctx context.Context, execID string) (int, error) {
	deadline := time.Now().Add(5 * time.Second)
	for delay := 5 * time.Millisecond; ; delay = min(2*delay, 200*time.Millisecond) {
		st, err := b.client.ExecInspect(ctx, execID)
		if err != nil {
			return -1, wrapf(err, "exec session %s", shortID(execID))
		}
		if !st.Running {
			return st.ExitCode, nil
		}
		if time.Now().After(deadline) {
			return -1, fmt.Errorf("exec session %s still running after its stream ended", shortID(execID))
		}
		select {
		case <-ctx.Done():
			return -1, ctx.Err()
		case <-time.After(delay):
		}
	}
}

// Attach connects to the container's main process until its output ends.
func (b *Backend) Attach(ctx context.Context, id string, sio runtime.StreamIO) error {
	ic, err := b.client.InspectContainer(ctx, id)
	if err != nil {
		return wrapf(err, "attaching to container %s", shortID(id))
	}
	sio.TTY = ic.Config.Tty // framing follows the container, not the caller
	conn, err := b.client.Attach(ctx, id, sio.Stdin != nil, sio.Stdout != nil, sio.Stderr != nil)
	if err != nil {
		return wrapf(err, "attaching to container %s", shortID(id))
	}
	resize := func(s runtime.TermSize) error { return b.client.ResizeContainer(ctx, id, s.Width, s.Height) }
	return wrapf(pipe(ctx, conn, sio, resize), "attached to container %s", shortID(id))
}

// pipe shuttles a hijacked stream: stdin in (half-closed at EOF, which is
// how the process sees EOF), output out (demultiplexed unless a TTY), resize
// events forwarded. It returns when the output ends or ctx is done. A
// caller's stdin that never ends keeps its copier until it does.
func pipe(ctx context.Context, conn *libpod.HijackedConn, sio runtime.StreamIO, resize func(runtime.TermSize) error) error {
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	done := make(chan struct{})
	defer close(done)
	if sio.Stdin != nil {
		go func() {
			_, _ = io.Copy(conn, sio.Stdin)
			_ = conn.CloseWrite()
		}()
	}
	if sio.Resize != nil {
		go runtime.ForwardResize(done, sio.Resize, resize)
	}
	var err error
	if sio.TTY {
		out := sio.Stdout
		if out == nil {
			out = io.Discard
		}
		_, err = io.Copy(out, conn)
	} else {
		err = libpod.Demux(conn, sio.Stdout, sio.Stderr)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
