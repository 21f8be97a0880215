// Package provider is the virtual-kubelet edge: the framework's pod calls
// become the "api" pod-config source, and statuses flow back via NotifyPods.
// The kubelet API's paths are internal/streaming's.
package provider

import (
	"context"
	"sync"
	"time"

	"github.com/runlet/runlet/internal/podconfig"
	"github.com/runlet/runlet/internal/status"
	"github.com/runlet/runlet/internal/telemetry"
	"github.com/sirupsen/logrus"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
)

// Config wires the provider.
type Config struct {
	NodeName string
	// Source is where the api source's snapshots go.
	Source chan<- []*v1.Pod
	Status *status.Manager
	// APIPods is the informer view of pods bound to the node.
	APIPods corev1listers.PodLister
	Log     logrus.FieldLogger
	// Static, if set, takes static pods' statuses.
	Static StaticPods
}

// StaticPods is the mirror pod manager as the provider sees it.
type StaticPods interface {
	// UpdateStatus routes a static pod's status to its mirror pod; the
	// framework cannot write it (the static pod's UID is not the mirror's).
	UpdateStatus(pod *v1.Pod)
}

// Provider implements the framework's pod lifecycle and notifier interfaces.
type Provider struct {
	cfg Config

	mu    sync.Mutex
	set   podStore
	dirty chan struct{}
}

// New returns a provider; Run must be started to feed the source.
func New(cfg Config) *Provider {
	return &Provider{cfg: cfg, set: newPodStore(), dirty: make(chan struct{}, 1)}
}

// dropForced drops force-deleted pods whose deletion a snapshot carried.
func (p *Provider) dropForced(sent []*v1.Pod) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.set.dropForced(sent) {
		p.markDirty()
	}
}

func (p *Provider) snapshot() []*v1.Pod {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.set.snapshot()
}

func (p *Provider) markDirty() {
	select {
	case p.dirty <- struct{}{}:
	default:
	}
}

func key(ns, name string) string { return ns + "/" + name }

// CreatePod hands a new pod to the api source.
func (p *Provider) CreatePod(ctx context.Context, pod *v1.Pod) error {
	_, span := telemetry.StartPodSpan(ctx, "provider.CreatePod", pod)
	defer span.End()
	return p.hand(pod)
}

// UpdatePod hands a changed pod to the api source.
func (p *Provider) UpdatePod(ctx context.Context, pod *v1.Pod) error {
	_, span := telemetry.StartPodSpan(ctx, "provider.UpdatePod", pod)
	defer span.End()
	return p.hand(pod)
}

func (p *Provider) hand(pod *v1.Pod) error {
	if podconfig.IsMirror(pod) {
		// A mirror pod stands for a static pod runlet already runs.
		return nil
	}
	p.mu.Lock()
	// An older pod under the same name has left the API: the framework
	// hands over the pod that replaced it and never deletes the old one.
	for _, old := range p.set.others(pod) {
		p.set.forget(old)
	}
	p.set.pods[pod.UID] = pod.DeepCopy()
	p.mu.Unlock()
	p.markDirty()
	return nil
}

// DeletePod starts a graceful delete; once the API object is gone the pod
// leaves the source and its remains are removed.
func (p *Provider) DeletePod(ctx context.Context, pod *v1.Pod) error {
	_, span := telemetry.StartPodSpan(ctx, "provider.DeletePod", pod)
	defer span.End()
	if podconfig.IsMirror(pod) {
		// Deleting a mirror pod never stops its static pod: the mirror
		// manager recreates the mirror instead, as the kubelet does.
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	cur, ok := p.held(pod)
	if !ok && pod.UID != "" && p.inAPI(pod) {
		// Deleted in the API before it was handed over (e.g. during a
		// restart of runlet): take it on so its containers stop gracefully.
		cur, ok = pod.DeepCopy(), true
	}
	if !ok {
		return errdefs.NotFoundf("pod %s is not known to runlet", key(pod.Namespace, pod.Name))
	}
	if !p.inAPI(cur) {
		p.set.forget(cur)
		p.markDirty()
		return nil
	}
	next := cur.DeepCopy()
	if pod.DeletionTimestamp != nil {
		next.DeletionTimestamp, next.DeletionGracePeriodSeconds = pod.DeletionTimestamp, pod.DeletionGracePeriodSeconds
	}
	if next.DeletionTimestamp == nil {
		now := metav1.NewTime(time.Now())
		next.DeletionTimestamp = &now
	}
	p.set.pods[next.UID] = next
	p.markDirty()
	return nil
}

// held finds the pod the framework means: by UID when it gives one, else
// the newest held under the name.
func (p *Provider) held(pod *v1.Pod) (*v1.Pod, bool) {
	if pod.UID != "" {
		cur, ok := p.set.pods[pod.UID]
		return cur, ok
	}
	return p.set.byName(pod.Namespace, pod.Name)
}

func (p *Provider) inAPI(pod *v1.Pod) bool {
	if p.cfg.APIPods == nil {
		return false
	}
	cur, err := p.cfg.APIPods.Pods(pod.Namespace).Get(pod.Name)
	return err == nil && cur.UID == pod.UID
}

// GetPod returns the pod with its newest status. The framework names pods
// by namespace/name only; when the API holds a pod under that name, only
// that very pod (its UID) is returned, so a pod re-created under the name
// of one runlet still stops is handed over rather than taken for the old.
func (p *Provider) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	p.mu.Lock()
	pod, ok := p.lookup(namespace, name)
	p.mu.Unlock()
	if !ok {
		return nil, errdefs.NotFoundf("pod %s/%s is not known to runlet", namespace, name)
	}
	return p.withStatus(pod), nil
}

func (p *Provider) lookup(namespace, name string) (*v1.Pod, bool) {
	if p.cfg.APIPods != nil {
		if cur, err := p.cfg.APIPods.Pods(namespace).Get(name); err == nil {
			pod, ok := p.set.pods[cur.UID]
			return pod, ok
		}
	}
	return p.set.byName(namespace, name)
}

func (p *Provider) withStatus(pod *v1.Pod) *v1.Pod {
	out := pod.DeepCopy()
	if st, ok := p.cfg.Status.GetPod(pod.UID); ok {
		out.Status = st.Status
	}
	return out
}

// GetPodStatus returns the pod's newest status.
func (p *Provider) GetPodStatus(ctx context.Context, namespace, name string) (*v1.PodStatus, error) {
	pod, err := p.GetPod(ctx, namespace, name)
	if err != nil {
		return nil, err
	}
	return &pod.Status, nil
}

// GetPods returns the pods the api source holds. Static pods are not listed:
// the framework would delete them as unknown to the API.
func (p *Provider) GetPods(ctx context.Context) ([]*v1.Pod, error) {
	var out []*v1.Pod
	for _, pod := range p.snapshot() {
		out = append(out, p.withStatus(pod))
	}
	return out, nil
}

// NotifyPods registers the framework's status callback.
func (p *Provider) NotifyPods(ctx context.Context, cb func(*v1.Pod)) {
	p.cfg.Status.SetNotifier(func(pod *v1.Pod) {
		if podconfig.IsStatic(pod) {
			if p.cfg.Static != nil {
				p.cfg.Static.UpdateStatus(pod)
			}
			return
		}
		p.mu.Lock()
		_, ok := p.set.pods[pod.UID]
		p.mu.Unlock()
		if ok {
			p.cfg.Log.WithFields(logrus.Fields{"pod": key(pod.Namespace, pod.Name), "phase": pod.Status.Phase}).Debug("status to the API")
			cb(pod)
		}
	})
}
