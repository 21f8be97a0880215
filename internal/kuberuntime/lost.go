package kuberuntime

import (
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/status"
	v1 "k8s.io/api/core/v1"
)

// withLostContainers adds to ps, for each regular container the backend has
// no record of, the exit its last API status reports (a podman pod removed
// behind runlet's back takes its containers with it). The record keeps the
// restart count going and keeps a container that finished under
// restartPolicy Never or OnFailure from running again, as the kubelet's
// runtime record does. ps itself is not changed.
func withLostContainers(pod *v1.Pod, ps *runtime.PodStatus) (*runtime.PodStatus, []runtime.Container) {
	var lost []runtime.Container
	for i := range pod.Spec.Containers {
		name := pod.Spec.Containers[i].Name
		if cur, _ := ps.Latest(name); cur != nil {
			continue
		}
		if c, ok := lostContainer(pod.Status.ContainerStatuses, name); ok {
			lost = append(lost, c)
		}
	}
	if len(lost) == 0 {
		return ps, nil
	}
	return withRecords(string(pod.UID), ps, lost), lost
}

// withRecords is a copy of ps (nil: the pod's empty status) with the
// records of containers the backend no longer has added.
func withRecords(uid string, ps *runtime.PodStatus, records []runtime.Container) *runtime.PodStatus {
	out := &runtime.PodStatus{UID: uid}
	if ps != nil {
		out.UID, out.Sandboxes = ps.UID, ps.Sandboxes
		out.Containers = append(out.Containers, ps.Containers...)
	}
	out.Containers = append(out.Containers, records...)
	return out
}

// lostContainer is the exited container a status records, if it records one.
func lostContainer(statuses []v1.ContainerStatus, name string) (runtime.Container, bool) {
	for _, cs := range statuses {
		if cs.Name != name {
			continue
		}
		t, attempt := cs.State.Terminated, int(cs.RestartCount)
		if t == nil && cs.State.Waiting != nil {
			t = cs.LastTerminationState.Terminated
			if t != nil && t.Reason == status.ReasonContainerStatusUnknown && attempt > 0 {
				// The count already includes the restart to come.
				attempt--
			}
		}
		if t == nil || t.Reason == status.ReasonRestartingAllContainers {
			// A RestartAllContainers restart removed it to run it again.
			return runtime.Container{}, false
		}
		return runtime.Container{Name: name, State: runtime.ContainerExited, ExitCode: int(t.ExitCode),
			Attempt: attempt, StartedAt: t.StartedAt.Time, FinishedAt: t.FinishedAt.Time}, true
	}
	return runtime.Container{}, false
}

// replaced are the last records of the regular containers removed with a
// sandbox that was not ready (its pause process died, or the host
// rebooted), as exits: the kubelet counts a sandbox change as a restart of
// each container, so their attempts go on in the new sandbox rather than
// start again from 0, and a restart policy says which run again. One that
// had not exited yet was killed with its sandbox (137, as SIGKILL).
func replaced(pod *v1.Pod, ps *runtime.PodStatus) []runtime.Container {
	var out []runtime.Container
	for i := range pod.Spec.Containers {
		cur, _ := ps.Latest(pod.Spec.Containers[i].Name)
		if cur == nil || cur.ID == "" {
			continue // a lost container's record goes on by itself
		}
		c := *cur
		if c.State != runtime.ContainerExited {
			c.State, c.ExitCode, c.FinishedAt = runtime.ContainerExited, 137, time.Now()
		}
		out = append(out, c)
	}
	return out
}

// rememberReplaced keeps the records of the containers removed with a
// replaced sandbox (replaced) beyond the sync that removes them: one that
// does not get to start their successors (a crash back-off, an error, a
// newer update of the pod) must leave the next sync what they did, or their
// restart counts start again from 0 and one that had finished runs again.
func (m *Manager) rememberReplaced(uid string, removed []runtime.Container) {
	if len(removed) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.replaced[uid] = append(m.replaced[uid], removed...)
}

// withReplaced adds to ps the remembered records of containers removed
// with a replaced sandbox that have no successor yet. A record goes once
// the backend shows its container (the removal failed) or a container of
// the same name in another sandbox (its successor). ps itself is not
// changed.
func (m *Manager) withReplaced(uid string, ps *runtime.PodStatus) *runtime.PodStatus {
	m.mu.Lock()
	var keep []runtime.Container
	for _, r := range m.replaced[uid] {
		if !succeeded(ps, r) {
			keep = append(keep, r)
		}
	}
	if len(keep) == 0 {
		delete(m.replaced, uid)
	} else {
		m.replaced[uid] = keep
	}
	m.mu.Unlock()
	if len(keep) == 0 {
		return ps
	}
	return withRecords(uid, ps, keep)
}

// succeeded reports whether ps shows the removed container r again, or a
// container that took its place.
func succeeded(ps *runtime.PodStatus, r runtime.Container) bool {
	if ps == nil {
		return false
	}
	for _, c := range ps.Containers {
		if c.Name == r.Name && (c.ID == r.ID || c.SandboxID != r.SandboxID) {
			return true
		}
	}
	return false
}
