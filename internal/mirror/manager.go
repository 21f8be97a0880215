// Package mirror keeps a mirror pod in the apiserver for every static pod
// (file or http source), as the kubelet's mirror client, tryReconcileMirrorPods
// and the orphan clean-up of HandlePodCleanups do together. All API calls
// happen on the manager's own goroutine: the sync loop only hands it state,
// so an apiserver outage never stalls it. Static pods' statuses go to their
// mirror pods through the status manager (internal/status), as all
// statuses do.
package mirror

import (
	"context"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/util/flowcontrol"
)

// Config wires a Manager.
type Config struct {
	Client   kubernetes.Interface
	NodeName string
	Log      logrus.FieldLogger
	// Pods lists the pods bound to the node (runlet's pod informer).
	Pods corev1listers.PodLister
	// Synced reports whether Pods has synced; until then nothing is
	// reconciled, as the kubelet waits for its node. nil: it has.
	Synced func() bool
	// Created, if set, is told of each static pod whose mirror pod was
	// created, so its status is written to the new mirror at once.
	Created func(static *v1.Pod)
}

// Manager creates, recreates and deletes mirror pods.
type Manager struct {
	cfg     Config
	kick    chan struct{}
	backoff *flowcontrol.Backoff

	mu           sync.Mutex
	static       map[string]*v1.Pod // by namespace/name: what the sources hold
	terminating  map[string]*v1.Pod // by namespace/name: removed, still stopping
	sourcesReady bool
}

// New returns a manager; Run does its work.
func New(cfg Config) *Manager {
	return &Manager{
		cfg:         cfg,
		kick:        make(chan struct{}, 1),
		backoff:     flowcontrol.NewBackOff(2*time.Second, time.Minute),
		static:      map[string]*v1.Pod{},
		terminating: map[string]*v1.Pod{},
	}
}

// Sync hands over the static pods the sources hold and those still
// terminating; it never blocks. Orphaned mirror pods are deleted only once
// every source has been seen, so a slow source does not lose its mirrors.
func (m *Manager) Sync(static, terminating []*v1.Pod, sourcesReady bool) {
	m.mu.Lock()
	m.static = byFullName(static)
	m.terminating = byFullName(terminating)
	m.sourcesReady = sourcesReady
	m.mu.Unlock()
	m.signal()
}

// StaticPod finds a static pod by namespace and name (the kubelet API uses
// the mirror pod's name, e.g. for kubectl logs).
func (m *Manager) StaticPod(namespace, name string) (*v1.Pod, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.static[namespace+"/"+name]
	if !ok {
		p, ok = m.terminating[namespace+"/"+name]
	}
	return p, ok
}

// MirrorPod returns the mirror pod of a static pod as the informer sees it.
func (m *Manager) MirrorPod(static *v1.Pod) (*v1.Pod, bool) {
	l := m.podLister()
	if l == nil {
		return nil, false
	}
	return Find(l, static)
}

// Find returns the mirror pod of a static pod that l holds.
func Find(l corev1listers.PodLister, static *v1.Pod) (*v1.Pod, bool) {
	mp, err := l.Pods(static.Namespace).Get(static.Name)
	if err != nil || !IsMirrorOf(mp, static) {
		return nil, false
	}
	return mp, true
}

// Run reconciles whenever state arrives, until ctx ends. The
// sync loop's housekeeping calls Sync every 2 s, which is also how a deleted
// mirror pod is noticed and recreated.
func (m *Manager) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.kick:
		}
		m.reconcile(ctx)
	}
}

func (m *Manager) signal() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// podLister is the node's pod lister once it has synced, else nil.
func (m *Manager) podLister() corev1listers.PodLister {
	if m.cfg.Synced != nil && !m.cfg.Synced() {
		return nil
	}
	return m.cfg.Pods
}

func byFullName(pods []*v1.Pod) map[string]*v1.Pod {
	out := make(map[string]*v1.Pod, len(pods))
	for _, p := range pods {
		out[p.Namespace+"/"+p.Name] = p
	}
	return out
}
