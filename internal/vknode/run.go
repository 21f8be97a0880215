package vknode

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"time"
)

// Run serves the kubelet port, starts the pod and node informers and the
// pod controller and, once the pod controller is ready, the node
// controller; it returns when ctx ends or a controller fails.
func (n *Node) Run(ctx context.Context) (err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer func() {
		cancel()
		n.err = err
		close(n.done)
	}()
	stopHTTP, err := n.serve()
	if err != nil {
		return err
	}
	defer stopHTTP()
	go n.pods.Start(ctx.Done())
	go n.pc.Run(ctx, n.cfg.Workers) //nolint:errcheck // its error is read from Err once Done closes
	defer func() { cancel(); <-n.pc.Done() }()
	if err := untilReady(ctx, n.pc); err != nil {
		return err
	}
	go n.nc.Run(ctx) //nolint:errcheck // as above
	defer func() { cancel(); <-n.nc.Done() }()
	if err := untilReady(ctx, n.nc); err != nil {
		return err
	}
	close(n.ready)
	select {
	case <-n.nc.Done():
		return n.nc.Err()
	case <-n.pc.Done():
		return n.pc.Err()
	}
}

// controller is what virtual-kubelet's node and pod controllers both report.
type controller interface {
	Ready() <-chan struct{}
	Done() <-chan struct{}
	Err() error
}

// untilReady waits for c to be ready; it returns ctx's error or the one c
// stopped with if either comes first.
func untilReady(ctx context.Context, c controller) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-c.Ready():
		return nil
	case <-c.Done():
		return c.Err()
	}
}

// serve listens on the kubelet port with TLS.
func (n *Node) serve() (stop func(), err error) {
	l, err := tls.Listen("tcp", n.cfg.ListenAddr, n.cfg.TLSConfig)
	if err != nil {
		return nil, fmt.Errorf("kubelet port: %w", err)
	}
	srv := &http.Server{Handler: n.cfg.Handler, TLSConfig: n.cfg.TLSConfig, ReadHeaderTimeout: 30 * time.Second}
	go srv.Serve(l) //nolint:errcheck // Serve always returns an error once closed
	return func() { _ = srv.Close() }, nil
}

// WaitReady returns once the node is registered and both controllers run,
// or with the reason it never will be.
func (n *Node) WaitReady(ctx context.Context) error {
	select {
	case <-n.ready:
		return nil
	case <-n.done:
		return fmt.Errorf("node stopped before it was ready: %w", n.err)
	case <-ctx.Done():
		return ctx.Err()
	}
}
