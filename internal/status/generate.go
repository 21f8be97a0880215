// Package status turns the backend's view of a pod into a v1.PodStatus and
// sends it upstream only when it changed, as the kubelet's status manager does.
package status

import (
	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Waiting is why a container is not running, as the last sync found it
// (ErrImagePull, ImagePullBackOff, CrashLoopBackOff, CreateContainerError...).
type Waiting struct {
	Reason, Message string
}

// Input is everything Generate reads.
type Input struct {
	Pod         *v1.Pod
	Runtime     *runtime.PodStatus
	Waiting     map[string]Waiting // by container name
	RuntimeName string             // prefix of container IDs, e.g. "podman"
	HostIPs     []string
	// Terminal says the pod worker has finished the pod: no container will run again.
	Terminal bool
}

// Generate builds the pod's API status from the backend's view.
func Generate(in Input) v1.PodStatus {
	pod := in.Pod
	st := v1.PodStatus{QOSClass: pod.Status.QOSClass}
	st.InitContainerStatuses = containerStatuses(in, pod.Spec.InitContainers, "ContainerCreating")
	waitReason := "ContainerCreating"
	if !allTerminatedOK(st.InitContainerStatuses) {
		waitReason = "PodInitializing"
	}
	st.ContainerStatuses = containerStatuses(in, pod.Spec.Containers, waitReason)
	st.EphemeralContainerStatuses = ephemeralStatuses(in)
	st.Phase = phase(pod, st.ContainerStatuses, st.InitContainerStatuses, in.Terminal)
	if sb := in.Runtime.Sandbox(); sb != nil && len(sb.IPs) > 0 {
		st.PodIP = sb.IPs[0]
		for _, ip := range sb.IPs {
			st.PodIPs = append(st.PodIPs, v1.PodIP{IP: ip})
		}
	}
	if pod.Spec.HostNetwork && len(in.HostIPs) > 0 {
		st.PodIP, st.PodIPs = in.HostIPs[0], nil
		for _, ip := range in.HostIPs {
			st.PodIPs = append(st.PodIPs, v1.PodIP{IP: ip})
		}
	}
	if len(in.HostIPs) > 0 {
		st.HostIP = in.HostIPs[0]
		for _, ip := range in.HostIPs {
			st.HostIPs = append(st.HostIPs, v1.HostIP{IP: ip})
		}
	}
	st.Conditions = conditions(pod, &st, in.Runtime.Sandbox() != nil && in.Runtime.Sandbox().State == runtime.SandboxReady)
	return st
}

func containerStatuses(in Input, specs []v1.Container, waitReason string) []v1.ContainerStatus {
	if len(specs) == 0 {
		return nil
	}
	out := make([]v1.ContainerStatus, 0, len(specs))
	for _, c := range specs {
		out = append(out, containerStatus(in, c, waitReason))
	}
	return out
}

// containerStatus reports one container; waitReason is why a container not
// created yet waits (ContainerCreating, or PodInitializing behind init containers).
func containerStatus(in Input, spec v1.Container, waitReason string) v1.ContainerStatus {
	cs := v1.ContainerStatus{Name: spec.Name, Image: spec.Image}
	cur, prev := in.Runtime.Latest(spec.Name)
	w, hasWaiting := in.Waiting[spec.Name]
	if cur == nil {
		cs.State.Waiting = &v1.ContainerStateWaiting{Reason: waitReason}
		if hasWaiting {
			cs.State.Waiting = &v1.ContainerStateWaiting{Reason: w.Reason, Message: w.Message}
		}
		return cs
	}
	cs.ContainerID = in.RuntimeName + "://" + cur.ID
	cs.ImageID = cur.ImageID
	cs.RestartCount = int32(cur.Attempt)
	started := false
	switch cur.State {
	case runtime.ContainerRunning:
		cs.State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(cur.StartedAt)}
		cs.Ready, started = true, true
	case runtime.ContainerExited:
		cs.State.Terminated = terminated(in.RuntimeName, cur)
	default:
		cs.State.Waiting = &v1.ContainerStateWaiting{Reason: "ContainerCreating"}
	}
	cs.Started = &started
	if prev != nil && prev.State == runtime.ContainerExited {
		cs.LastTerminationState.Terminated = terminated(in.RuntimeName, prev)
	}
	if hasWaiting && cur.State != runtime.ContainerRunning {
		// The container exited and waits to be restarted (or failed to be):
		// report the exit as the last state, as the kubelet does.
		if cs.State.Terminated != nil {
			cs.LastTerminationState.Terminated = cs.State.Terminated
			cs.State.Terminated = nil
		}
		cs.State.Waiting = &v1.ContainerStateWaiting{Reason: w.Reason, Message: w.Message}
	}
	return cs
}

func terminated(runtimeName string, c *runtime.Container) *v1.ContainerStateTerminated {
	t := &v1.ContainerStateTerminated{
		ExitCode:    int32(c.ExitCode),
		StartedAt:   metav1.NewTime(c.StartedAt),
		FinishedAt:  metav1.NewTime(c.FinishedAt),
		ContainerID: runtimeName + "://" + c.ID,
		Reason:      "Completed",
		Message:     c.Error,
	}
	switch {
	case c.OOMKilled:
		t.Reason = "OOMKilled"
	case c.ExitCode != 0 || c.Error != "":
		t.Reason = "Error"
	}
	return t
}

func conditions(pod *v1.Pod, st *v1.PodStatus, sandboxReady bool) []v1.PodCondition {
	initialized := allTerminatedOK(st.InitContainerStatuses)
	ready := allReady(st.ContainerStatuses) && st.Phase == v1.PodRunning
	conds := []v1.PodCondition{
		cond(v1.PodReadyToStartContainers, sandboxReady && st.Phase != v1.PodSucceeded && st.Phase != v1.PodFailed, ""),
		cond(v1.PodInitialized, initialized, "ContainersNotInitialized"),
		cond(v1.ContainersReady, ready, "ContainersNotReady"),
		cond(v1.PodReady, ready, "ContainersNotReady"),
		{Type: v1.PodScheduled, Status: v1.ConditionTrue},
	}
	if st.Phase == v1.PodSucceeded {
		conds[2].Reason, conds[3].Reason = "PodCompleted", "PodCompleted"
		conds[1] = cond(v1.PodInitialized, true, "")
		conds[1].Reason = "PodCompleted"
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.PodScheduled {
			conds[4].LastTransitionTime = c.LastTransitionTime
		}
	}
	return conds
}

func cond(t v1.PodConditionType, ok bool, falseReason string) v1.PodCondition {
	if ok {
		return v1.PodCondition{Type: t, Status: v1.ConditionTrue}
	}
	return v1.PodCondition{Type: t, Status: v1.ConditionFalse, Reason: falseReason}
}

func allReady(cs []v1.ContainerStatus) bool {
	for _, c := range cs {
		if !c.Ready {
			return false
		}
	}
	return len(cs) > 0
}

func allTerminatedOK(cs []v1.ContainerStatus) bool {
	for _, c := range cs {
		if c.State.Terminated == nil || c.State.Terminated.ExitCode != 0 {
			return false
		}
	}
	return true
}
