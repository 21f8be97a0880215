package libpod

import (
	"context"
	"net"
)

// dialer opens one connection to the libpod API; every request and every
// stream (exec, attach) takes its own.
type dialer interface {
	DialContext(ctx context.Context) (net.Conn, error)
	Close() error
}

// netDialer dials a unix socket or a TCP address.
type netDialer struct{ network, address string }

func (d netDialer) DialContext(ctx context.Context) (net.Conn, error) {
	var nd net.Dialer
	return nd.DialContext(ctx, d.network, d.address)
}

func (netDialer) Close() error { return nil }

// closeWriter is a connection that can be half-closed: a unix or TCP socket,
// or an ssh channel. podman reads the half-close as stdin EOF.
type closeWriter interface {
	CloseWrite() error
}
