package node

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
)

// HealthCheck reports why the node is not healthy (nil when it is).
type HealthCheck func() error

// Provider is the framework's NodeProvider: Ping asks the backend, and the
// Ready condition follows the health checks (e.g. the PLEG relisting).
type Provider struct {
	rt     runtime.Runtime
	checks []HealthCheck
	node   *v1.Node

	mu       sync.Mutex
	lastErr  string
	notifyCb func(*v1.Node)
}

// NewProvider returns a node provider for the node template n.
func NewProvider(rt runtime.Runtime, n *v1.Node, checks ...HealthCheck) *Provider {
	return &Provider{rt: rt, node: n, checks: checks}
}

// Ping fails when the backend does not answer, so the lease is not renewed
// and the node goes NotReady instead of claiming pods it cannot run.
func (p *Provider) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := p.rt.Ping(ctx); err != nil {
		return fmt.Errorf("container backend unreachable: %w", err)
	}
	return nil
}

// NotifyNodeStatus registers the framework's node status callback.
func (p *Provider) NotifyNodeStatus(ctx context.Context, cb func(*v1.Node)) {
	p.mu.Lock()
	p.notifyCb = cb
	p.mu.Unlock()
	go p.watch(ctx)
}

func (p *Provider) watch(ctx context.Context) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			p.check()
		}
	}
}

// check re-evaluates health and pushes a status only when Ready changed.
func (p *Provider) check() {
	var failed error
	for _, c := range p.checks {
		if err := c(); err != nil {
			failed = err
			break
		}
	}
	msg := ""
	if failed != nil {
		msg = failed.Error()
	}
	p.mu.Lock()
	changed := msg != p.lastErr
	p.lastErr = msg
	cb := p.notifyCb
	p.mu.Unlock()
	if !changed || cb == nil {
		return
	}
	n := p.node.DeepCopy()
	n.Status.Conditions = Conditions(failed)
	cb(n)
}
