package podman

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/runlet/runlet/internal/runtime/portforward"
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
		conn, err = portforward.DialLoopback(ctx, meta.labels[labelNetNS], port)
	default:
		infra, ierr := b.client.InspectContainer(ctx, meta.infraID)
		if ierr != nil {
			return wrapf(ierr, "port-forward to pod %s", shortID(sandboxID))
		}
		if infra.State.Pid <= 0 {
			return fmt.Errorf("port-forward to pod %s: the pod's infra container is not running", shortID(sandboxID))
		}
		conn, err = portforward.DialLoopback(ctx, fmt.Sprintf("/proc/%d/ns/net", infra.State.Pid), port)
	}
	if err != nil && len(meta.ips) > 0 && (b.remote || errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOENT)) {
		var d net.Dialer
		conn, err = d.DialContext(ctx, "tcp", net.JoinHostPort(meta.ips[0], strconv.Itoa(int(port))))
	}
	if err != nil {
		return fmt.Errorf("port-forward to pod %s port %d: %w", shortID(sandboxID), port, err)
	}
	return portforward.Splice(ctx, conn.(*net.TCPConn), stream)
}
