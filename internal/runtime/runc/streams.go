package runc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/conmon"
	"github.com/runlet/runlet/internal/runtime/portforward"
	"golang.org/x/sys/unix"
)

// Logs reads the container's log, which conmon writes.
func (b *Backend) Logs(ctx context.Context, id string, opts runtime.LogOptions, stdout, stderr io.Writer) error {
	rec, err := b.readContainer(id)
	if err != nil {
		return err
	}
	running := func(context.Context) bool { return !b.ended(rec) }
	found, err := conmon.ReadLog(ctx, logPath(b.bundle(id)), opts, stdout, stderr, running)
	if !found && err == nil {
		return fmt.Errorf("container %s has no log yet", rec.Config.Name)
	}
	return err
}

// Attach connects to the container's main process through conmon's attach
// socket until its output ends.
func (b *Backend) Attach(ctx context.Context, id string, sio runtime.StreamIO) error {
	rec, err := b.readContainer(id)
	if err != nil {
		return err
	}
	bundle := b.bundle(id)
	conn, err := dialAttach(bundle)
	if err != nil {
		return fmt.Errorf("attaching to container %s: %w", rec.Config.Name, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	done := make(chan struct{})
	defer close(done)
	if sio.Stdin != nil && (rec.Config.Stdin || rec.Config.TTY) {
		go func() {
			_, _ = io.Copy(conn, sio.Stdin)
			_ = conn.CloseWrite()
		}()
	}
	if sio.Resize != nil && rec.Config.TTY {
		go runtime.ForwardResize(done, sio.Resize, func(s runtime.TermSize) error { return resizeConmon(bundle, s) })
	}
	err = demuxAttach(conn, sio.Stdout, sio.Stderr)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// dialAttach connects to conmon's attach socket (SOCK_SEQPACKET) through
// the bundle's directory descriptor, as podman does: the socket's full
// path may be longer than a socket address holds.
func dialAttach(bundle string) (*net.UnixConn, error) {
	dir, err := os.Open(bundle)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	addr := &net.UnixAddr{Name: fmt.Sprintf("/proc/self/fd/%d/attach", dir.Fd()), Net: "unixpacket"}
	return net.DialUnix("unixpacket", nil, addr)
}

// conmon's attach packets start with the stream they carry.
const (
	attachStdout = 2
	attachStderr = 3
	attachBuffer = 8192 + 1
)

func demuxAttach(conn *net.UnixConn, stdout, stderr io.Writer) error {
	buf := make([]byte, attachBuffer)
	for {
		n, err := conn.Read(buf)
		if n > 0 {
			w := stdout
			if buf[0] == attachStderr {
				w = stderr
			} else if buf[0] != attachStdout {
				w = nil
			}
			if w != nil {
				if _, werr := w.Write(buf[1:n]); werr != nil {
					return werr
				}
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		if n == 0 {
			return nil
		}
	}
}

// resizeConmon tells conmon the terminal's new size through its control
// FIFO (message type 1).
func resizeConmon(bundle string, s runtime.TermSize) error {
	f, err := os.OpenFile(filepath.Join(bundle, "ctl"), os.O_WRONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "1 %d %d\n", s.Height, s.Width)
	return err
}

// PortForward connects stream to port on the pod's loopback, inside its
// network namespace.
func (b *Backend) PortForward(ctx context.Context, sandboxID string, port int32, stream io.ReadWriteCloser) error {
	rec, err := b.readSandbox(sandboxID)
	if err != nil {
		return err
	}
	ns := b.podNet(rec)
	if ns == "" {
		ns = "/proc/self/ns/net" // the host's network
	}
	conn, err := portforward.DialLoopback(ctx, ns, port)
	if err != nil {
		return fmt.Errorf("port-forward to pod %s/%s port %d: %w", rec.Config.Namespace, rec.Config.Name, port, err)
	}
	tcp, ok := conn.(*net.TCPConn)
	if !ok {
		conn.Close()
		return errors.New("port-forward: not a TCP connection")
	}
	return portforward.Splice(ctx, tcp, stream)
}
