package mirror

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func statusKey(uid types.UID) string { return "status/" + string(uid) }

// flushStatuses writes each queued static pod status to its mirror pod, the
// way the kubelet's status manager writes a static pod's status through its
// mirror's UID. A status whose mirror does not exist yet stays queued: the
// mirror's creation (or the informer catching up) brings it back.
func (m *Manager) flushStatuses(ctx context.Context) {
	for _, sp := range m.takeDirty() {
		mirror, ok := m.MirrorPod(sp)
		if !ok || mirror.DeletionTimestamp != nil {
			m.requeue(sp.UID)
			continue
		}
		key := statusKey(sp.UID)
		if m.backoff.IsInBackOffSinceUpdate(key, time.Now()) {
			m.requeue(sp.UID)
			continue
		}
		if err := m.writeStatus(ctx, mirror, sp.Status); err != nil {
			m.cfg.Log.WithError(err).WithField("pod", sp.Namespace+"/"+sp.Name).Warn("failed updating the status of a mirror pod")
			m.backoff.Next(key, time.Now())
			m.requeue(sp.UID)
			continue
		}
		m.backoff.Reset(key)
	}
}

// takeDirty returns the queued statuses and clears the queue.
func (m *Manager) takeDirty() []*v1.Pod {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*v1.Pod, 0, len(m.dirty))
	for uid := range m.dirty {
		if p, ok := m.statuses[uid]; ok {
			out = append(out, p)
		}
	}
	m.dirty.Clear()
	return out
}

// requeue keeps a status queued unless a newer one or a prune replaced it.
func (m *Manager) requeue(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.statuses[uid]; ok {
		m.dirty.Insert(uid)
	}
}

// writeStatus replaces the mirror's status; on a conflict (the informer's copy
// was stale) it retries once on a fresh copy of the same object.
func (m *Manager) writeStatus(ctx context.Context, mirror *v1.Pod, st v1.PodStatus) error {
	if apiequality.Semantic.DeepEqual(mirror.Status, st) {
		return nil
	}
	pods := m.cfg.Client.CoreV1().Pods(mirror.Namespace)
	next := mirror.DeepCopy()
	next.Status = st
	_, err := pods.UpdateStatus(ctx, next, metav1.UpdateOptions{})
	if !apierrors.IsConflict(err) {
		return ignoreNotFound(err)
	}
	fresh, err := pods.Get(ctx, mirror.Name, metav1.GetOptions{})
	if err != nil || fresh.UID != mirror.UID {
		return ignoreNotFound(err) // replaced: the new mirror gets it next round
	}
	fresh.Status = st
	_, err = pods.UpdateStatus(ctx, fresh, metav1.UpdateOptions{})
	return ignoreNotFound(err)
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
