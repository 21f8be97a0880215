package status

import (
	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
)

// DelayTerminal is the kubelet's mergePodStatus rule: a pod is not reported
// terminal while any of its containers could still run. A pod past its
// deadline, or whose init container failed beside running sidecars, keeps
// its previous phase until its worker has stopped them.
func (m *Manager) DelayTerminal(pod *v1.Pod, st *v1.PodStatus, ps *runtime.PodStatus) {
	if !isTerminal(st.Phase) || !anyRunning(ps) {
		return
	}
	prev := pod.Status.DeepCopy()
	m.mu.Lock()
	if old, ok := m.statuses[pod.UID]; ok {
		prev = old.Status.DeepCopy()
	}
	m.mu.Unlock()
	if isTerminal(prev.Phase) {
		return
	}
	st.Phase, st.Reason, st.Message = prev.Phase, prev.Reason, prev.Message
	if st.Phase == "" {
		st.Phase = v1.PodPending
	}
}

func anyRunning(ps *runtime.PodStatus) bool {
	if ps == nil {
		return false
	}
	for _, c := range ps.Containers {
		if c.State == runtime.ContainerRunning || c.State == runtime.ContainerCreated {
			return true
		}
	}
	return false
}
