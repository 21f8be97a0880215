// Package apisource is the kubelet's "api" pod-config source: the pods the
// apiserver binds to the node. virtual-kubelet's pod controller hands them
// over (through the provider's CreatePod, UpdatePod and DeletePod); the
// node's pod informer completes them, as the kubelet's source reads its own
// watch: the pods that ended or were being deleted before runlet started,
// the conditions others set on them, and resizes of their pod-level
// resources. Every change goes to podconfig as
// a snapshot of the whole set, and to the node's checkpoint, whose pods the
// source sends instead when the API has not answered in time (offline.go).
package apisource

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/runlet/runlet/internal/podconfig"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// ErrNotFound is returned for a pod the source does not hold.
var ErrNotFound = errors.New("pod not known to runlet")

// Informer is the node's pod informer as the source reads it.
type Informer interface {
	Lister() corev1listers.PodLister
	// Synced reports whether the informer's cache has been filled once.
	Synced() bool
	AddEventHandler(cache.ResourceEventHandler) error
}

// Config is what a Source reads and where it sends.
type Config struct {
	// Updates is podconfig's channel of the api source.
	Updates chan<- []*v1.Pod
	// Pods is the informer of the pods bound to the node.
	Pods Informer
	// Checkpoint, if set, keeps every set of the API's pods the source
	// sends, and holds the pods it runs when the API has not listed the
	// node's pods by OfflineAt.
	Checkpoint Checkpoint
	// OfflineAt is when the source sends the checkpoint's pods if the API
	// has not answered by then; zero: it waits for the API.
	OfflineAt time.Time
	// Online, if set, is called once the API's pods were sent the first
	// time (after the checkpoint's, if they went first).
	Online func()
	// Log receives the offline start; nil: nowhere.
	Log logrus.FieldLogger
}

// Checkpoint is the node's local copy of its API pods (internal/checkpoint).
type Checkpoint interface {
	// Pods are the pods last kept, with their last statuses.
	Pods() []*v1.Pod
	// SetPods keeps the API's pods as the source sends them.
	SetPods([]*v1.Pod)
	// SetOffline says whether the pods run from the checkpoint.
	SetOffline(bool)
}

// Source holds the node's pods from the API.
type Source struct {
	cfg Config

	mu    sync.Mutex
	set   podStore
	dirty chan struct{}
}

// New returns a source that watches cfg.Pods for what the framework does
// not hand over (apiHandler); Run
// must be started to feed podconfig.
func New(cfg Config) (*Source, error) {
	s := &Source{cfg: cfg, set: newPodStore(), dirty: make(chan struct{}, 1)}
	if err := cfg.Pods.AddEventHandler(s.apiHandler()); err != nil {
		return nil, err
	}
	return s, nil
}

// Run sends a snapshot whenever the pod set changed. Once the informer has
// synced, the source starts from every pod the API binds to the node
// (mirror pods aside), as the kubelet's api source starts from its watch's
// list: running pods, pods being deleted, and pods that ended before runlet
// started, which the framework never hands over. The source is thus
// complete when it is first seen, and housekeeping never takes a pod the
// framework has not handed over yet for an orphan. The framework's calls
// keep it current from there.
func (s *Source) Run(ctx context.Context) {
	if !s.waitForAPI(ctx) {
		return
	}
	s.seed()
	s.markDirty()
	online := s.cfg.Online
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.dirty:
		}
		snap := s.snapshot()
		if s.cfg.Checkpoint != nil {
			s.cfg.Checkpoint.SetPods(snap)
		}
		select {
		case <-ctx.Done():
			return
		case s.cfg.Updates <- snap:
		}
		s.dropForced(snap)
		if online != nil {
			online()
			online = nil
		}
	}
}

// seed takes on the node's pods the framework has not handed over yet. The
// API's view replaces the checkpoint's pod by pod: a pod it still holds is
// its own version from now on, and one it no longer holds was deleted
// while runlet ran offline, and is stopped.
func (s *Source) seed() {
	pods, err := s.cfg.Pods.Lister().List(labels.Everything())
	if err != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	inAPI := make(map[types.UID]bool, len(pods))
	for _, pod := range pods {
		inAPI[pod.UID] = true
	}
	for uid := range s.set.restored {
		if inAPI[uid] {
			delete(s.set.pods, uid)
			delete(s.set.restored, uid)
		} else if cur, ok := s.set.pods[uid]; ok {
			s.set.forget(cur)
		}
	}
	for _, pod := range pods {
		if _, ok := s.set.pods[pod.UID]; !ok && !podconfig.IsMirror(pod) {
			s.set.pods[pod.UID] = pod.DeepCopy()
		}
	}
	if s.cfg.Checkpoint != nil {
		s.cfg.Checkpoint.SetOffline(false)
	}
}

// Add takes on a new or changed pod. Mirror pods stand for static pods
// runlet already runs, and are not the source's.
func (s *Source) Add(pod *v1.Pod) {
	if podconfig.IsMirror(pod) {
		return
	}
	s.mu.Lock()
	// An older pod under the same name has left the API: the framework
	// hands over the pod that replaced it and never deletes the old one.
	for _, old := range s.set.others(pod) {
		s.set.forget(old)
	}
	s.set.pods[pod.UID] = pod.DeepCopy()
	delete(s.set.restored, pod.UID) // the API's version from now on
	s.mu.Unlock()
	s.markDirty()
}

// Delete starts a graceful delete; once the API object is gone the pod
// leaves the source. Deleting a mirror pod never stops its static pod: the
// mirror manager recreates the mirror instead, as the kubelet does.
func (s *Source) Delete(pod *v1.Pod) error {
	if podconfig.IsMirror(pod) {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.held(pod)
	if !ok && pod.UID != "" && s.inAPI(pod) {
		// Deleted in the API before it was handed over (e.g. during a
		// restart of runlet): take it on so its containers stop gracefully.
		cur, ok = pod.DeepCopy(), true
	}
	if !ok {
		return ErrNotFound
	}
	if !s.inAPI(cur) {
		s.set.forget(cur)
		s.markDirty()
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
	s.set.pods[next.UID] = next
	s.markDirty()
	return nil
}

// held finds the pod the framework means: by UID when it gives one, else
// the newest held under the name.
func (s *Source) held(pod *v1.Pod) (*v1.Pod, bool) {
	if pod.UID != "" {
		cur, ok := s.set.pods[pod.UID]
		return cur, ok
	}
	return s.set.byName(pod.Namespace, pod.Name)
}

func (s *Source) inAPI(pod *v1.Pod) bool {
	cur, err := s.cfg.Pods.Lister().Pods(pod.Namespace).Get(pod.Name)
	return err == nil && cur.UID == pod.UID
}

// Get returns a copy of the pod held under namespace/name. The framework
// names pods by name only; when the API holds a pod under that name, only
// that very pod (its UID) is returned, so a pod re-created under the name
// of one runlet still stops is handed over rather than taken for the old.
func (s *Source) Get(namespace, name string) (*v1.Pod, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var pod *v1.Pod
	var ok bool
	if cur, err := s.cfg.Pods.Lister().Pods(namespace).Get(name); err == nil {
		pod, ok = s.set.pods[cur.UID]
	} else {
		pod, ok = s.set.byName(namespace, name)
	}
	if !ok {
		return nil, false
	}
	return pod.DeepCopy(), true
}

// Holds reports whether the source holds the pod with this UID.
func (s *Source) Holds(uid types.UID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.set.pods[uid]
	return ok
}

// Pods returns copies of the pods the source holds.
func (s *Source) Pods() []*v1.Pod {
	snap := s.snapshot()
	out := make([]*v1.Pod, 0, len(snap))
	for _, p := range snap {
		out = append(out, p.DeepCopy())
	}
	return out
}

// dropForced drops force-deleted pods whose deletion a snapshot carried.
func (s *Source) dropForced(sent []*v1.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set.dropForced(sent) {
		s.markDirty()
	}
}

func (s *Source) snapshot() []*v1.Pod {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.set.snapshot()
}

func (s *Source) markDirty() {
	select {
	case s.dirty <- struct{}{}:
	default:
	}
}
