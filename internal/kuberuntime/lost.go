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
	out := &runtime.PodStatus{UID: string(pod.UID)}
	if ps != nil {
		out.UID, out.Sandboxes = ps.UID, ps.Sandboxes
		out.Containers = append(out.Containers, ps.Containers...)
	}
	out.Containers = append(out.Containers, lost...)
	return out, lost
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
