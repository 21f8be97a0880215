package node

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
)

// HealthCheck reports why the node is not healthy (nil when it is).
type HealthCheck func() error

// PressureSource lists the pressure conditions that hold now, sorted (the
// eviction manager's).
type PressureSource func() []v1.NodeConditionType

// Provider is the framework's NodeProvider: Ping asks the backend, the
// Ready condition follows the health checks (e.g. the PLEG relisting), and
// the pressure conditions follow the pressure source.
type Provider struct {
	rt     runtime.Status
	checks []HealthCheck
	node   *v1.Node

	pressure PressureSource
	recorder record.EventRecorder

	mu       sync.Mutex
	lastErr  string
	notifyCb func(*v1.Node)
	// lastPressure and conds are what was last reported; checked says a
	// check has run (the first one records the pressure events).
	lastPressure []v1.NodeConditionType
	conds        []v1.NodeCondition
	checked      bool
}

// NewProvider returns a node provider for the node template n.
func NewProvider(rt runtime.Status, n *v1.Node, checks ...HealthCheck) *Provider {
	p := &Provider{rt: rt, node: n, checks: checks, conds: n.Status.Conditions}
	// A node that registers NotReady (its network is not ready yet) is
	// pushed Ready by the first check that passes.
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady && c.Status != v1.ConditionTrue {
			p.lastErr = c.Message
		}
	}
	return p
}

// WithPressure makes the pressure conditions follow src; rec records the
// kubelet's node events as they change ("Node n status is now:
// NodeHasDiskPressure"). Call it before the framework starts the node.
func (p *Provider) WithPressure(src PressureSource, rec record.EventRecorder) *Provider {
	p.pressure, p.recorder = src, rec
	return p
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

// Refresh re-evaluates health at once, for a change (the pod CIDR) that
// should not wait for the next tick.
func (p *Provider) Refresh() { p.check() }

// Reconcile compares the Node as the API has it with the conditions last
// reported, and pushes them again when one of them says otherwise there:
// the node lifecycle controller set Ready Unknown while the node could not
// reach the apiserver, say. The kubelet compares them every
// nodeStatusUpdateFrequency; runlet is told of each change by its watch of
// its own Node, and between changes reports its status every
// nodeStatusReportFrequency, as the kubelet does.
func (p *Provider) Reconcile(api *v1.Node) {
	p.mu.Lock()
	cb := p.notifyCb
	var n *v1.Node
	if cb != nil && p.checked && differs(p.conds, api.Status.Conditions) {
		n = p.node.DeepCopy()
		n.Status.Conditions = slices.Clone(p.conds)
	}
	p.mu.Unlock()
	if n != nil {
		cb(n)
	}
}

// APIHandler has Reconcile told of each change of the node's own Node.
func (p *Provider) APIHandler() cache.ResourceEventHandler {
	reconcile := func(obj any) {
		if n, ok := obj.(*v1.Node); ok {
			p.Reconcile(n)
		}
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: reconcile, UpdateFunc: func(_, obj any) { reconcile(obj) }}
}

// differs reports whether a condition of reported is missing from api or
// has another status there.
func differs(reported, api []v1.NodeCondition) bool {
	for _, r := range reported {
		i := slices.IndexFunc(api, func(c v1.NodeCondition) bool { return c.Type == r.Type })
		if i < 0 || api[i].Status != r.Status {
			return true
		}
	}
	return false
}

// check re-evaluates health and pressure, and pushes a status only when
// Ready or a pressure condition changed.
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
	var pressure []v1.NodeConditionType
	if p.pressure != nil {
		pressure = p.pressure()
	}
	p.mu.Lock()
	changed := msg != p.lastErr || !slices.Equal(pressure, p.lastPressure)
	prev, first := p.lastPressure, !p.checked
	p.lastErr, p.lastPressure, p.checked = msg, pressure, true
	cb := p.notifyCb
	var n *v1.Node
	if changed && cb != nil {
		n = p.node.DeepCopy()
		n.Status.Conditions = keepTransitions(p.conds, Conditions(failed, pressure...))
		p.conds = n.Status.Conditions
	}
	p.mu.Unlock()
	if p.pressure != nil {
		p.recordPressureEvents(prev, pressure, first)
	}
	if n != nil {
		cb(n)
	}
}

// recordPressureEvents records, as the kubelet's status setters do, an
// event for each pressure condition that changed, and for all of them the
// first time.
func (p *Provider) recordPressureEvents(prev, now []v1.NodeConditionType, first bool) {
	if p.recorder == nil {
		return
	}
	ref := &v1.ObjectReference{Kind: "Node", Name: p.node.Name, UID: types.UID(p.node.Name)}
	for _, pc := range pressureConditions {
		was, is := slices.Contains(prev, pc.typ), slices.Contains(now, pc.typ)
		if !first && was == is {
			continue
		}
		event := pc.falseEvent
		if is {
			event = pc.trueEvent
		}
		p.recorder.Eventf(ref, v1.EventTypeNormal, event, "Node %s status is now: %s", p.node.Name, event)
	}
}

// keepTransitions keeps the transition time of each condition whose status
// did not change since it was last reported.
func keepTransitions(old, conds []v1.NodeCondition) []v1.NodeCondition {
	for i := range conds {
		for _, o := range old {
			if o.Type == conds[i].Type && o.Status == conds[i].Status {
				conds[i].LastTransitionTime = o.LastTransitionTime
			}
		}
	}
	return conds
}
