package mirror

import (
	"context"
	"errors"
	"time"

	"github.com/runlet/runlet/internal/podconfig"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	corev1listers "k8s.io/client-go/listers/core/v1"
)

// state is one consistent view of what Sync handed over.
type state struct {
	lister       corev1listers.PodLister
	static       []*v1.Pod
	keep         map[string]bool // names whose mirror must not be deleted as orphan
	sourcesReady bool
}

func (m *Manager) snapshot() state {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := state{lister: m.podLister(), sourcesReady: m.sourcesReady, keep: map[string]bool{}}
	for name, p := range m.static {
		st.static = append(st.static, p)
		st.keep[name] = true
	}
	for name := range m.terminating {
		st.keep[name] = true
	}
	return st
}

// reconcile makes the mirror pods match the static pods: create missing ones,
// replace stale or deleted ones, and (once sources are ready) delete orphans.
func (m *Manager) reconcile(ctx context.Context) {
	st := m.snapshot()
	if st.lister == nil {
		return
	}
	mirrors, err := listMirrors(st.lister)
	if err != nil {
		m.cfg.Log.WithError(err).Warn("listing mirror pods")
		return
	}
	for _, sp := range st.static {
		m.syncMirror(ctx, sp, mirrors[sp.Namespace+"/"+sp.Name])
	}
	if st.sourcesReady {
		m.deleteOrphans(ctx, mirrors, st.keep)
	}
	m.backoff.GC()
}

// listMirrors returns the node's mirror pods by namespace/name.
func listMirrors(l corev1listers.PodLister) (map[string]*v1.Pod, error) {
	pods, err := l.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	out := map[string]*v1.Pod{}
	for _, p := range pods {
		if podconfig.IsMirror(p) {
			out[p.Namespace+"/"+p.Name] = p
		}
	}
	return out, nil
}

// syncMirror is the kubelet's tryReconcileMirrorPods: a mirror being deleted
// or carrying another hash (the manifest changed) is deleted, then created
// anew. A mirror deleted in the API thus comes back; the static pod's
// containers are never touched.
func (m *Manager) syncMirror(ctx context.Context, static, mirror *v1.Pod) {
	if mirror != nil && mirror.DeletionTimestamp == nil && IsMirrorOf(mirror, static) {
		return
	}
	id := string(static.UID)
	if m.backoff.IsInBackOffSinceUpdate(id, time.Now()) {
		return
	}
	log := m.cfg.Log.WithField("pod", static.Namespace+"/"+static.Name)
	if mirror != nil {
		log.WithField("mirrorUID", mirror.UID).Info("deleting a mirror pod that is being deleted or does not match its static pod")
		if !m.deleteMirror(ctx, mirror.Namespace, mirror.Name, mirror.UID) {
			return // not ours to replace yet: the informer will catch up
		}
	}
	created, err := m.createMirror(ctx, static)
	if err != nil {
		if errors.Is(err, errNodeDeleting) || apierrors.IsNotFound(err) {
			log.WithError(err).Info("no mirror pod for now")
		} else {
			log.WithError(err).Warn("failed creating a mirror pod")
		}
		m.backoff.Next(id, time.Now())
		return
	}
	if created {
		log.Info("created a mirror pod for static pod")
	}
	m.backoff.Reset(id)
	if created && m.cfg.Created != nil {
		m.cfg.Created(static)
	}
}

// deleteOrphans removes mirror pods whose static pod no source holds and
// whose containers are not still stopping (HandlePodCleanups).
func (m *Manager) deleteOrphans(ctx context.Context, mirrors map[string]*v1.Pod, keep map[string]bool) {
	for name, mp := range mirrors {
		if keep[name] {
			continue
		}
		m.cfg.Log.WithField("pod", name).Info("deleting an orphaned mirror pod")
		m.deleteMirror(ctx, mp.Namespace, mp.Name, mp.UID)
	}
}
