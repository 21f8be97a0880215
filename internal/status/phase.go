package status

import (
	v1 "k8s.io/api/core/v1"
)

// phase is the kubelet's getPhase for pods without sidecar init containers:
// it reads the container statuses it has just built.
func phase(pod *v1.Pod, info []v1.ContainerStatus, initInfo []v1.ContainerStatus, podIsTerminal bool) v1.PodPhase {
	pendingInit, failedInit := initCounts(info, initInfo, pod)
	if failedInit > 0 && pod.Spec.RestartPolicy == v1.RestartPolicyNever {
		return v1.PodFailed
	}
	var unknown, running, waiting, stopped, succeeded int
	for _, c := range pod.Spec.Containers {
		cs := find(info, c.Name)
		switch {
		case cs == nil:
			unknown++
		case cs.State.Running != nil:
			running++
		case cs.State.Terminated != nil:
			stopped++
			if cs.State.Terminated.ExitCode == 0 {
				succeeded++
			}
		case cs.State.Waiting != nil && cs.LastTerminationState.Terminated != nil:
			stopped++
		case cs.State.Waiting != nil:
			waiting++
		default:
			unknown++
		}
	}
	switch {
	case pendingInit > 0, waiting > 0:
		return v1.PodPending
	case running > 0 && unknown == 0:
		return v1.PodRunning
	case running == 0 && stopped > 0 && unknown == 0:
		return stoppedPhase(pod, stopped, succeeded, podIsTerminal)
	}
	return v1.PodPending
}

func stoppedPhase(pod *v1.Pod, stopped, succeeded int, podIsTerminal bool) v1.PodPhase {
	if podIsTerminal {
		if stopped == succeeded {
			return v1.PodSucceeded
		}
		return v1.PodFailed
	}
	switch pod.Spec.RestartPolicy {
	case v1.RestartPolicyAlways:
		return v1.PodRunning
	case v1.RestartPolicyOnFailure:
		if stopped == succeeded {
			return v1.PodSucceeded
		}
		return v1.PodRunning
	}
	if stopped == succeeded {
		return v1.PodSucceeded
	}
	return v1.PodFailed
}

func initCounts(_ []v1.ContainerStatus, initInfo []v1.ContainerStatus, pod *v1.Pod) (pending, failed int) {
	for _, c := range pod.Spec.InitContainers {
		cs := find(initInfo, c.Name)
		switch {
		case cs == nil, cs.State.Running != nil:
			pending++
		case cs.State.Terminated != nil:
			if cs.State.Terminated.ExitCode != 0 {
				failed++
			}
		case cs.LastTerminationState.Terminated != nil:
			if cs.LastTerminationState.Terminated.ExitCode != 0 {
				failed++
			}
		default:
			pending++
		}
	}
	return pending, failed
}

func find(info []v1.ContainerStatus, name string) *v1.ContainerStatus {
	for i := range info {
		if info[i].Name == name {
			return &info[i]
		}
	}
	return nil
}
