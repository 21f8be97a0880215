package allocation

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// conditions are a pod's resize conditions, as the kubelet's status
// manager caches them: PodResizePending while the node cannot take the
// resize, PodResizeInProgress from acceptance until every running container
// has its new resources.
type conditions struct {
	pending, inProgress *v1.PodCondition
}

// SetPending records that the pod's resize waits (reason Deferred or
// Infeasible); it reports whether the reason or generation changed.
func (m *Manager) SetPending(uid types.UID, reason, message string, generation int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.conds(uid)
	old := c.pending
	c.pending = condition(v1.PodResizePending, old, reason, message, generation)
	return old == nil || old.Reason != reason || old.ObservedGeneration != generation
}

// ClearPending drops the pending condition.
func (m *Manager) ClearPending(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.resize[uid]; c != nil {
		c.pending = nil
	}
}

// Pending is the pending condition, if any.
func (m *Manager) Pending(uid types.UID) *v1.PodCondition {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.resize[uid]; c != nil && c.pending != nil {
		return c.pending.DeepCopy()
	}
	return nil
}

// SetInProgress records a resize being applied; a reason (Error) and
// message say why it is stuck. An existing condition keeps its generation
// unless reset is set (a new resize accepted), as on the kubelet. It
// reports whether the condition changed.
func (m *Manager) SetInProgress(uid types.UID, reason, message string, generation int64, reset bool) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.conds(uid)
	old := c.inProgress
	if old != nil && !reset {
		// Neither the generation nor an error's reason and message go
		// until the resize is done or a new one is accepted.
		generation = old.ObservedGeneration
		if reason == "" {
			reason, message = old.Reason, old.Message
		}
	}
	if old != nil && old.Reason == reason && old.Message == message && old.ObservedGeneration == generation {
		return false
	}
	c.inProgress = condition(v1.PodResizeInProgress, old, reason, message, generation)
	return true
}

// ClearInProgress drops the in-progress condition and returns the
// generation it carried; ok is false when there was none.
func (m *Manager) ClearInProgress(uid types.UID) (generation int64, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.resize[uid]
	if c == nil || c.inProgress == nil {
		return 0, false
	}
	generation = c.inProgress.ObservedGeneration
	c.inProgress = nil
	return generation, true
}

// Conditions are the pod's resize conditions, for its status.
func (m *Manager) Conditions(uid types.UID) []v1.PodCondition {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.resize[uid]
	if c == nil {
		return nil
	}
	var out []v1.PodCondition
	for _, cond := range []*v1.PodCondition{c.pending, c.inProgress} {
		if cond != nil {
			out = append(out, *cond.DeepCopy())
		}
	}
	return out
}

// PendingPods are the pods whose resize waits.
func (m *Manager) PendingPods() []types.UID {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []types.UID
	for uid, c := range m.resize {
		if c.pending != nil {
			out = append(out, uid)
		}
	}
	return out
}

func (m *Manager) conds(uid types.UID) *conditions {
	c := m.resize[uid]
	if c == nil {
		c = &conditions{}
		m.resize[uid] = c
	}
	return c
}

// condition is the kubelet's updatedPodResizeCondition: the transition
// time moves only with the reason.
func condition(t v1.PodConditionType, old *v1.PodCondition, reason, message string, generation int64) *v1.PodCondition {
	now := metav1.NewTime(time.Now())
	transition := now
	if old != nil && old.Reason == reason {
		transition = old.LastTransitionTime
	}
	return &v1.PodCondition{Type: t, Status: v1.ConditionTrue, LastProbeTime: now, LastTransitionTime: transition,
		ObservedGeneration: generation, Reason: reason, Message: message}
}
