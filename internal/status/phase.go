package status

import (
	"github.com/runlet/runlet/internal/podutil"
	v1 "k8s.io/api/core/v1"
)

// phase is the kubelet's getPhase (pkg/kubelet/kubelet_pods.go, v1.37.2,
// ContainerRestartRules on): it reads the container statuses it has just
// built. Sidecars (init containers with restartPolicy Always) keep the pod
// Pending until they have started, unless podHasInitialized (a regular
// container exists in the pod's sandbox); once stopped they no longer count.
func phase(pod *v1.Pod, info []v1.ContainerStatus, initInfo []v1.ContainerStatus, podIsTerminal, podHasInitialized bool) v1.PodPhase {
	pendingRegularInit, failedInitNotRestartable := regularInitCounts(pod, initInfo)
	if failedInitNotRestartable > 0 {
		return v1.PodFailed
	}
	var n counts
	pendingSidecars := n.addSidecars(pod, initInfo)
	n.addRegular(pod, info)
	switch {
	case pendingRegularInit > 0 || (pendingSidecars > 0 && !podHasInitialized) || n.waiting > 0:
		return v1.PodPending
	case n.running > 0 && n.unknown == 0:
		return v1.PodRunning
	case n.running == 0 && n.stopped > 0 && n.unknown == 0:
		return stoppedPhase(n, podIsTerminal)
	}
	return v1.PodPending
}

// counts of sidecars and regular containers by state, as getPhase keeps them.
type counts struct {
	unknown, running, waiting, stopped, stoppedNotRestartable, succeeded int
}

// addSidecars counts running and waiting sidecars; it returns how many have
// not started yet. A stopped sidecar does not count.
func (n *counts) addSidecars(pod *v1.Pod, initInfo []v1.ContainerStatus) (pending int) {
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if !podutil.IsRestartableInitContainer(c) {
			continue
		}
		cs := find(initInfo, c.Name)
		switch {
		case cs == nil:
			n.unknown++
		case cs.State.Running != nil:
			if cs.Started == nil || !*cs.Started {
				pending++
			}
			n.running++
		case cs.State.Terminated != nil:
		case cs.State.Waiting != nil:
			if cs.LastTerminationState.Terminated == nil {
				pending++
				n.waiting++
			}
		default:
			pending++
			n.unknown++
		}
	}
	return pending
}

func (n *counts) addRegular(pod *v1.Pod, info []v1.ContainerStatus) {
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		cs := find(info, c.Name)
		switch {
		case cs == nil:
			n.unknown++
		case cs.State.Running != nil:
			n.running++
		case cs.State.Terminated != nil:
			n.addStopped(pod, c, cs.State.Terminated, true)
		case cs.State.Waiting != nil && cs.LastTerminationState.Terminated != nil:
			n.addStopped(pod, c, cs.LastTerminationState.Terminated, false)
		case cs.State.Waiting != nil:
			n.waiting++
		default:
			n.unknown++
		}
	}
}

// addStopped counts a stopped container; a container waiting to restart
// counts as stopped but never as succeeded, as in getPhase. One stopped by
// a RestartAllContainers restart runs again.
func (n *counts) addStopped(pod *v1.Pod, c *v1.Container, end *v1.ContainerStateTerminated, terminated bool) {
	n.stopped++
	if !podutil.ContainerShouldRestart(*c, pod.Spec, end.ExitCode) && !restartableByReset(end) {
		n.stoppedNotRestartable++
	}
	if terminated && end.ExitCode == 0 {
		n.succeeded++
	}
}

func stoppedPhase(n counts, podIsTerminal bool) v1.PodPhase {
	// A terminal pod's containers will not be restarted, whatever its policy.
	// (The kubelet leaves static pods out of this; runlet's mirror pods show
	// the end of a static pod as for any pod.)
	if podIsTerminal {
		if n.stopped == n.succeeded {
			return v1.PodSucceeded
		}
		return v1.PodFailed
	}
	if n.stopped != n.stoppedNotRestartable {
		// At least one container is in the process of restarting.
		return v1.PodRunning
	}
	if n.stopped == n.succeeded {
		return v1.PodSucceeded
	}
	return v1.PodFailed
}

// regularInitCounts counts regular init containers not done yet, and those
// that failed and will not run again.
func regularInitCounts(pod *v1.Pod, initInfo []v1.ContainerStatus) (pending, failedNotRestartable int) {
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if podutil.IsRestartableInitContainer(c) {
			continue
		}
		cs := find(initInfo, c.Name)
		var last *v1.ContainerStateTerminated
		switch {
		case cs == nil, cs.State.Running != nil:
			pending++
			continue
		case cs.State.Terminated != nil:
			last = cs.State.Terminated
		case cs.State.Waiting != nil && cs.LastTerminationState.Terminated != nil:
			last = cs.LastTerminationState.Terminated
		default:
			pending++
			continue
		}
		if last.ExitCode != 0 && !podutil.ContainerShouldRestart(*c, pod.Spec, last.ExitCode) && !restartableByReset(last) {
			failedNotRestartable++
		}
	}
	return pending, failedNotRestartable
}

func find(info []v1.ContainerStatus, name string) *v1.ContainerStatus {
	for i := range info {
		if info[i].Name == name {
			return &info[i]
		}
	}
	return nil
}
