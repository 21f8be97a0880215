package podman

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/runlet/runlet/internal/netns"
	"golang.org/x/sys/unix"
)

// PortForward connects stream to port on the sandbox's loopback, so it
// reaches servers bound to 127.0.0.1 as kubelet's port-forward does. The
// dial happens inside the pod's network namespace (setns on a dedicated OS
// thread). That needs CAP_SYS_ADMIN and the infra process visible in
// runlet's PID namespace; otherwise the pod IP is dialled from the host,
// which misses loopback-only servers.
func (b *Backend) PortForward(ctx context.Context, sandboxID string, port int32, stream io.ReadWriteCloser) error {
	defer stream.Close()
	meta, err := b.sandboxMeta(ctx, sandboxID, "")
	if err != nil {
		return err
	}
	var conn net.Conn
	switch {
	case b.remote:
		// The infra PID names a process on another host.
		err = errors.New("the pod runs on a remote podman host")
	case meta.labels[labelNetNS] != "":
		conn, err = dialInNetns(ctx, meta.labels[labelNetNS], port)
	default:
		infra, ierr := b.client.InspectContainer(ctx, meta.infraID)
		if ierr != nil {
			return wrapf(ierr, "port-forward to pod %s", shortID(sandboxID))
		}
		if infra.State.Pid <= 0 {
			return fmt.Errorf("port-forward to pod %s: the pod's infra container is not running", shortID(sandboxID))
		}
		conn, err = dialInNetns(ctx, fmt.Sprintf("/proc/%d/ns/net", infra.State.Pid), port)
	}
	if err != nil && len(meta.ips) > 0 && (b.remote || errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOENT)) {
		var d net.Dialer
		conn, err = d.DialContext(ctx, "tcp", net.JoinHostPort(meta.ips[0], strconv.Itoa(int(port))))
	}
	if err != nil {
		return fmt.Errorf("port-forward to pod %s port %d: %w", shortID(sandboxID), port, err)
	}
	return splice(ctx, conn.(*net.TCPConn), stream)
}

// dialInNetns dials 127.0.0.1:port (then [::1]) from inside the network
// namespace at path.
func dialInNetns(ctx context.Context, path string, port int32) (net.Conn, error) {
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

// splice copies both ways; each side's EOF half-closes the other, and the
// whole ends when both directions are done or ctx is.
func splice(ctx context.Context, conn *net.TCPConn, stream io.ReadWriteCloser) error {
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
