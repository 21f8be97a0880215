package provider

import (
	"context"

	"github.com/runlet/runlet/internal/podconfig"
	"k8s.io/apimachinery/pkg/labels"
)

// Run sends a snapshot to the api source whenever the pod set changed. Once
// the framework's informer has synced, the source starts from every pod the
// API binds to the node (mirror pods aside), as the kubelet's api source
// starts from its informer's list: running pods, pods being deleted, and
// pods that ended before runlet started, which the framework never hands
// over. The source is thus complete when it is first seen, and housekeeping
// never takes a pod the framework has not handed over yet for an orphan.
// The framework's calls keep it current from there.
func (p *Provider) Run(ctx context.Context, initialSync <-chan struct{}) {
	select {
	case <-ctx.Done():
		return
	case <-initialSync:
	}
	p.seed()
	p.markDirty()
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.dirty:
		}
		snap := p.snapshot()
		select {
		case <-ctx.Done():
			return
		case p.cfg.Source <- snap:
		}
		p.dropForced(snap)
	}
}

// seed takes on the node's pods the framework has not handed over yet.
func (p *Provider) seed() {
	if p.cfg.APIPods == nil {
		return
	}
	pods, err := p.cfg.APIPods.List(labels.Everything())
	if err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pod := range pods {
		if _, ok := p.set.pods[pod.UID]; !ok && !podconfig.IsMirror(pod) {
			p.set.pods[pod.UID] = pod.DeepCopy()
		}
	}
}
