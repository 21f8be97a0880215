// Package provider is the virtual-kubelet edge: the framework's pod calls
// become the "api" pod-config source, and statuses flow back via NotifyPods.
package provider

import (
	"context"
	"sync"
	"time"

	"github.com/runlet/runlet/internal/podconfig"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/status"
	"github.com/runlet/runlet/internal/telemetry"
	"github.com/sirupsen/logrus"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corev1listers "k8s.io/client-go/listers/core/v1"
)

// Config wires the provider.
type Config struct {
	NodeName string
	// Source is where the api source's snapshots go.
	Source chan<- []*v1.Pod
	Status *status.Manager
	// Runtime and Pods back the kubelet API handlers (logs, exec, ...).
	Runtime runtime.Runtime
	Pods    PodLookup
	// APIPods is the framework's informer view of pods bound to the node.
	APIPods corev1listers.PodLister
	Log     logrus.FieldLogger
	// Static, if set, takes static pods' statuses and finds them by name.
	Static StaticPods
	// Stats computes /stats/summary and /metrics/resource (internal/stats).
	Stats StatsSource
}

// PodLookup finds the backend view of a running pod for the kubelet API.
type PodLookup interface {
	RuntimeStatus(uid types.UID) *runtime.PodStatus
}

// StaticPods is the mirror pod manager as the provider sees it.
type StaticPods interface {
	// UpdateStatus routes a static pod's status to its mirror pod; the
	// framework cannot write it (the static pod's UID is not the mirror's).
	UpdateStatus(pod *v1.Pod)
	// StaticPod finds a static pod by its (mirror pod's) name.
	StaticPod(namespace, name string) (*v1.Pod, bool)
}

// Provider implements the framework's pod lifecycle and notifier interfaces.
type Provider struct {
	cfg Config

	mu   sync.Mutex
	pods map[string]*v1.Pod // namespace/name -> pod as the framework handed it
	// forced holds pods force-deleted in the API, sent once as deleted.
	forced map[string]types.UID
	dirty  chan struct{}
}

// New returns a provider; Run must be started to feed the source.
func New(cfg Config) *Provider {
	return &Provider{cfg: cfg, pods: map[string]*v1.Pod{}, forced: map[string]types.UID{}, dirty: make(chan struct{}, 1)}
}

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

// forget takes a pod that left the API out of the source. One that left
// without a graceful delete was force-deleted: it is first sent once more as
// deleted with grace 0, so its containers are killed at once rather than
// after the spec's grace period, then dropped (REMOVE).
func (p *Provider) forget(k string, cur *v1.Pod) {
	if cur.DeletionTimestamp != nil {
		delete(p.pods, k)
		p.markDirty()
		return
	}
	next := cur.DeepCopy()
	now, zero := metav1.NewTime(time.Now()), int64(0)
	next.DeletionTimestamp, next.DeletionGracePeriodSeconds = &now, &zero
	p.pods[k] = next
	p.forced[k] = next.UID
	p.markDirty()
}

// dropForced removes force-deleted pods once a snapshot carried their
// deletion, so the next snapshot sends the REMOVE.
func (p *Provider) dropForced(sent []*v1.Pod) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pod := range sent {
		k := key(pod.Namespace, pod.Name)
		if uid, ok := p.forced[k]; ok && uid == pod.UID {
			delete(p.forced, k)
			delete(p.pods, k)
			p.markDirty()
		}
	}
}

func (p *Provider) snapshot() []*v1.Pod {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*v1.Pod, 0, len(p.pods))
	for _, pod := range p.pods {
		out = append(out, pod)
	}
	return out
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
	return p.store(pod)
}

// UpdatePod hands a changed pod to the api source.
func (p *Provider) UpdatePod(ctx context.Context, pod *v1.Pod) error {
	_, span := telemetry.StartPodSpan(ctx, "provider.UpdatePod", pod)
	defer span.End()
	return p.store(pod)
}

func (p *Provider) store(pod *v1.Pod) error {
	if podconfig.IsMirror(pod) {
		// A mirror pod stands for a static pod runlet already runs.
		return nil
	}
	p.mu.Lock()
	p.pods[key(pod.Namespace, pod.Name)] = pod.DeepCopy()
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
	k := key(pod.Namespace, pod.Name)
	p.mu.Lock()
	defer p.mu.Unlock()
	cur, ok := p.pods[k]
	if !ok && pod.UID != "" && p.inAPI(pod) {
		// Deleted in the API before it was handed over (e.g. during a
		// restart of runlet): take it on so its containers stop gracefully.
		cur, ok = pod.DeepCopy(), true
	}
	if !ok || (pod.UID != "" && cur.UID != pod.UID) {
		return errdefs.NotFoundf("pod %s is not known to runlet", k)
	}
	if !p.inAPI(cur) {
		p.forget(k, cur)
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
	p.pods[k] = next
	p.markDirty()
	return nil
}

func (p *Provider) inAPI(pod *v1.Pod) bool {
	if p.cfg.APIPods == nil {
		return false
	}
	cur, err := p.cfg.APIPods.Pods(pod.Namespace).Get(pod.Name)
	return err == nil && cur.UID == pod.UID
}

// GetPod returns the pod with its newest status.
func (p *Provider) GetPod(ctx context.Context, namespace, name string) (*v1.Pod, error) {
	p.mu.Lock()
	pod, ok := p.pods[key(namespace, name)]
	p.mu.Unlock()
	if !ok {
		return nil, errdefs.NotFoundf("pod %s/%s is not known to runlet", namespace, name)
	}
	if st, ok := p.cfg.Status.GetPod(pod.UID); ok {
		out := pod.DeepCopy()
		out.Status = st.Status
		return out, nil
	}
	return pod.DeepCopy(), nil
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
		got, err := p.GetPod(ctx, pod.Namespace, pod.Name)
		if err == nil {
			out = append(out, got)
		}
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
		cur, ok := p.pods[key(pod.Namespace, pod.Name)]
		p.mu.Unlock()
		if ok && cur.UID == pod.UID {
			p.cfg.Log.WithFields(logrus.Fields{"pod": key(pod.Namespace, pod.Name), "phase": pod.Status.Phase}).Debug("status to the API")
			p.keepForeignConditions(pod)
			cb(pod)
		}
	})
}

// handoverTimeout bounds how long the first snapshot waits for the framework
// to hand over the pods it already knows (it skips pods it cannot prepare).
const handoverTimeout = 30 * time.Second

// awaitHandover waits until every live pod of the node in the API has reached
// CreatePod, so the api source is not "seen" with pods still missing: that
// would let housekeeping remove containers of pods that merely came late.
func (p *Provider) awaitHandover(ctx context.Context) {
	deadline := time.Now().Add(handoverTimeout)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if p.missing() == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := p.missing(); n > 0 {
		p.cfg.Log.WithField("pods", n).Warn("some pods of this node were not handed over in time; continuing")
	}
}

func (p *Provider) missing() int {
	if p.cfg.APIPods == nil {
		return 0
	}
	pods, err := p.cfg.APIPods.List(labels.Everything())
	if err != nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, pod := range pods {
		if podconfig.IsMirror(pod) || pod.DeletionTimestamp != nil ||
			pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
			continue
		}
		if cur, ok := p.pods[key(pod.Namespace, pod.Name)]; !ok || cur.UID != pod.UID {
			n++
		}
	}
	return n
}
