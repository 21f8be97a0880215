package provider

import (
	"context"
	"time"

	"github.com/runlet/runlet/internal/podconfig"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Run sends a snapshot to the api source whenever the pod set changed, and
// an initial empty one so the source counts as seen once the framework's
// caches have been handed over.
func (p *Provider) Run(ctx context.Context, initialSync <-chan struct{}) {
	select {
	case <-ctx.Done():
		return
	case <-initialSync:
	}
	p.awaitHandover(ctx)
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

// handoverReport is how often a handover still waiting says for what.
const handoverReport = 30 * time.Second

// awaitHandover waits until every live pod of the node in the API has reached
// CreatePod, so the api source is not "seen" with pods still missing: that
// would let housekeeping remove containers of pods that merely came late.
// It waits on that fact, however long the framework takes, and says which
// pods it waits for. Then it takes on the node's finished pods, which the
// framework never hands over, so their containers and logs stay until the
// pods are deleted.
func (p *Provider) awaitHandover(ctx context.Context) {
	next := time.Now().Add(handoverReport)
	for ctx.Err() == nil {
		missing := p.missing()
		if len(missing) == 0 {
			break
		}
		if time.Now().After(next) {
			p.cfg.Log.WithField("pods", missing).Warn("waiting for the framework to hand over these pods before the api source counts as seen")
			next = time.Now().Add(handoverReport)
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.adoptFinished()
}

// nodePods lists the node's pods in the API, but for mirror pods.
func (p *Provider) nodePods() []*v1.Pod {
	if p.cfg.APIPods == nil {
		return nil
	}
	pods, err := p.cfg.APIPods.List(labels.Everything())
	if err != nil {
		return nil
	}
	out := pods[:0]
	for _, pod := range pods {
		if !podconfig.IsMirror(pod) {
			out = append(out, pod)
		}
	}
	return out
}

func (p *Provider) missing() []string {
	pods := p.nodePods()
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, pod := range pods {
		if pod.DeletionTimestamp != nil || finished(pod) {
			continue
		}
		if _, ok := p.set.pods[pod.UID]; !ok {
			out = append(out, key(pod.Namespace, pod.Name))
		}
	}
	return out
}

// adoptFinished takes on the node's pods that ended (Succeeded or Failed)
// before runlet started.
func (p *Provider) adoptFinished() {
	pods := p.nodePods()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pod := range pods {
		if _, ok := p.set.pods[pod.UID]; !ok && finished(pod) && pod.DeletionTimestamp == nil {
			p.set.pods[pod.UID] = pod.DeepCopy()
		}
	}
}

func finished(pod *v1.Pod) bool {
	return pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed
}
