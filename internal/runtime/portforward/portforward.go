package portforward

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/runlet/runlet/internal/netns"
)

// DialLoopback dials 127.0.0.1:port (then [::1]) from inside the network
// namespace at path (a pinned file, or /proc/<pid>/ns/net), on an OS thread
// of its own. Entering needs CAP_SYS_ADMIN: the error then wraps EPERM, or
// ENOENT for a namespace that is not there, and a caller may try the pod's
// IP from here instead.
func DialLoopback(ctx context.Context, path string, port int32) (net.Conn, error) {
	var conn net.Conn
	err := netns.Do(path, func() error {
		d := net.Dialer{Timeout: 10 * time.Second}
		p := strconv.Itoa(int(port))
		c, err := d.DialContext(ctx, "tcp4", "127.0.0.1:"+p)
		if err != nil {
			if c6, err6 := d.DialContext(ctx, "tcp6", "[::1]:"+p); err6 == nil {
				c, err = c6, nil
			}
		}
		conn = c
		return err
	})
	return conn, err
}

// Splice copies both ways; each side's EOF half-closes the other, and the
// whole ends when both directions are done or ctx is. It closes conn; the
// caller closes stream.
func Splice(ctx context.Context, conn *net.TCPConn, stream io.ReadWriteCloser) error {
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close(); stream.Close() })
	defer stop()
	errc := make(chan error, 2)
	go func() {
		_, err := io.Copy(conn, stream)
		_ = conn.CloseWrite()
		errc <- err
	}()
	go func() {
		_, err := io.Copy(stream, conn)
		if cw, ok := stream.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			_ = stream.Close()
		}
		errc <- err
	}()
	err1, err2 := <-errc, <-errc
	if ctx.Err() != nil {
		return nil
	}
	return errors.Join(ignoreClosed(err1), ignoreClosed(err2))
}

func ignoreClosed(err error) error {
	if errors.Is(err, net.ErrClosed) || errors.Is(err, io.ErrClosedPipe) {
		return nil
	}
	return err
}
