package status

import (
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// PodStatus returns the newest status recorded for the pod. The probe
// workers read container IDs, states and the pod IP from it, as the
// kubelet's workers read its status manager.
func (m *Manager) PodStatus(uid types.UID) (v1.PodStatus, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.statuses[uid]
	if !ok {
		return v1.PodStatus{}, false
	}
	return *p.Status.DeepCopy(), true
}

// SetContainerReadiness records a readiness probe's new result in the pod's
// status at once, with the Ready and ContainersReady conditions that follow,
// as the kubelet's status manager does. It must not wait for the pod's
// worker: that one may be busy stopping the pod, and a pod that stops being
// ready while it terminates must say so.
func (m *Manager) SetContainerReadiness(uid types.UID, containerID string, ready bool) {
	m.updateContainer(uid, containerID, func(pod *v1.Pod, st *v1.PodStatus, cs *v1.ContainerStatus) bool {
		if cs.Ready == ready {
			return false
		}
		cs.Ready = ready
		setReadyConditions(pod, st)
		return true
	})
}

// SetContainerStartup records a startup probe's new result in the pod's status.
func (m *Manager) SetContainerStartup(uid types.UID, containerID string, started bool) {
	m.updateContainer(uid, containerID, func(_ *v1.Pod, _ *v1.PodStatus, cs *v1.ContainerStatus) bool {
		if cs.Started != nil && *cs.Started == started {
			return false
		}
		cs.Started = &started
		return true
	})
}

// updateContainer applies change to the status of the container with the
// backend ID containerID, and records the result if change reports one.
func (m *Manager) updateContainer(uid types.UID, containerID string, change func(*v1.Pod, *v1.PodStatus, *v1.ContainerStatus) bool) {
	m.mu.Lock()
	cur, ok := m.statuses[uid]
	if !ok || isTerminal(cur.Status.Phase) {
		m.mu.Unlock()
		return
	}
	pod := cur.DeepCopy()
	m.mu.Unlock()
	st := &pod.Status
	cs := findContainerByID(st, containerID)
	if cs == nil || !change(pod, st, cs) {
		return
	}
	m.SetPodStatus(pod, *st)
}

func findContainerByID(st *v1.PodStatus, containerID string) *v1.ContainerStatus {
	suffix := "://" + containerID
	for _, list := range [][]v1.ContainerStatus{st.ContainerStatuses, st.InitContainerStatuses} {
		for i := range list {
			if strings.HasSuffix(list[i].ContainerID, suffix) {
				return &list[i]
			}
		}
	}
	return nil
}

// setReadyConditions recomputes ContainersReady and Ready from the container
// statuses, keeping the readiness gates' say.
func setReadyConditions(pod *v1.Pod, st *v1.PodStatus) {
	all := append(append([]v1.ContainerStatus{}, st.InitContainerStatuses...), st.ContainerStatuses...)
	containersReady := containersReadyCondition(pod, all, st.Phase)
	ready := podReadyCondition(pod, st.Conditions, containersReady)
	for i := range st.Conditions {
		switch st.Conditions[i].Type {
		case v1.ContainersReady:
			st.Conditions[i] = containersReady
		case v1.PodReady:
			st.Conditions[i] = ready
		}
	}
}
