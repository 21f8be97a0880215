// Package status turns the backend's view of a pod into a v1.PodStatus and
// sends it upstream only when it changed, as the kubelet's status manager does.
package status

import (
	"github.com/runlet/runlet/internal/podutil"
	"github.com/runlet/runlet/internal/qos"
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
	// Messages are the termination messages of exited containers, by
	// container ID (without the runtime prefix).
	Messages map[string]string
	// Probes, if set, says whether running containers have started and are ready.
	Probes ContainerProbes
	// Old is the pod's last status (nil: the pod's own): what it says of a
	// container the backend no longer has is carried over.
	Old *v1.PodStatus
	// Actuated, if set, is what was last applied to a running container
	// (Pod is then the pod with its allocated resources).
	Actuated func(container string) (v1.ResourceRequirements, bool)
	// PodInForce, if set, reads the pod's resources as its cgroup holds
	// them (Pod is then the pod with its allocated resources); it is asked
	// only of a running pod.
	PodInForce func() *v1.ResourceRequirements
	// ResizeConditions are the pod's PodResizePending and
	// PodResizeInProgress conditions, if any.
	ResizeConditions []v1.PodCondition

	// couldRestartAll and restartingAll are set by Generate: the pod has a
	// RestartAllContainers rule, and is restarting all its containers.
	couldRestartAll, restartingAll bool
}

// Generate builds the pod's API status from the backend's view.
func Generate(in Input) v1.PodStatus {
	pod := in.Pod
	// The apiserver sets the QoS class of the pods it stores; static pods
	// get it here, as the kubelet computes it.
	st := v1.PodStatus{QOSClass: qos.GetPodQOS(pod)}
	if in.couldRestartAll = podutil.AllContainersCouldRestart(&pod.Spec); in.couldRestartAll {
		in.restartingAll = restartingAll(in)
	}
	waitReason := defaultWaitingReason(pod)
	st.InitContainerStatuses = initContainerStatuses(in, waitReason)
	st.ContainerStatuses = containerStatuses(in, pod.Spec.Containers, waitReason)
	st.EphemeralContainerStatuses = ephemeralStatuses(in)
	st.Phase = phase(pod, st.ContainerStatuses, st.InitContainerStatuses, in.Terminal, regularContainerActive(in))
	capMessages(pod, &st)
	in.setPodResources(&st)
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
	st.Conditions = conditions(pod, &st, in.Runtime)
	if in.couldRestartAll {
		keepInitialized(st.Conditions, in.old())
		st.Conditions = append(st.Conditions, allContainersRestartingCondition(in, st.Phase))
	}
	// The generation this status answers, on the status and on each
	// condition runlet owns, as the kubelet does since PodObservedGenerationTracking went GA.
	st.ObservedGeneration = pod.Generation
	for i := range st.Conditions {
		if ownedConditions[st.Conditions[i].Type] {
			st.Conditions[i].ObservedGeneration = pod.Generation
		}
	}
	// A resize condition carries the generation of the resize it is about.
	st.Conditions = append(st.Conditions, in.ResizeConditions...)
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
// created yet waits (ContainerCreating, or PodInitializing in a pod with init
// containers).
func containerStatus(in Input, spec v1.Container, waitReason string) v1.ContainerStatus {
	// Started is always set, false until known, as the kubelet's prober
	// manager sets it on every container status.
	cs := v1.ContainerStatus{Name: spec.Name, Image: spec.Image, Started: new(bool)}
	cur, prev := in.Runtime.Latest(spec.Name)
	w, hasWaiting := in.Waiting[spec.Name]
	if cur == nil {
		cs.State.Waiting = &v1.ContainerStateWaiting{Reason: waitReason}
		old := in.oldStatus(spec.Name)
		if in.restartingAll && old != nil && old.State.Waiting == nil {
			removedForRestartAll(&cs, old)
			return cs
		}
		if old != nil {
			carryOver(&cs, old, in.Pod.DeletionTimestamp != nil)
		}
		if hasWaiting {
			if cs.State.Terminated != nil {
				cs.LastTerminationState.Terminated = cs.State.Terminated
				cs.State.Terminated = nil
			}
			cs.State.Waiting = &v1.ContainerStateWaiting{Reason: w.Reason, Message: w.Message}
		}
		return cs
	}
	cs.ContainerID = in.RuntimeName + "://" + cur.ID
	cs.ImageID = cur.ImageID
	in.setResources(&cs, &spec, cur.State == runtime.ContainerRunning)
	cs.RestartCount = int32(cur.Attempt)
	started := false
	switch cur.State {
	case runtime.ContainerRunning:
		cs.State.Running = &v1.ContainerStateRunning{StartedAt: metav1.NewTime(cur.StartedAt)}
		started, cs.Ready = in.runningState(&spec, cur)
	case runtime.ContainerExited:
		cs.State.Terminated = terminated(in, cur)
	default:
		cs.State.Waiting = &v1.ContainerStateWaiting{Reason: "ContainerCreating"}
	}
	cs.Started = &started
	if prev != nil && prev.State == runtime.ContainerExited {
		cs.LastTerminationState.Terminated = terminated(in, prev)
	}
	if old := in.oldStatus(spec.Name); in.couldRestartAll && old != nil {
		keepRestartCount(&cs, old, prev != nil)
	}
	if hasWaiting && cur.State != runtime.ContainerRunning && !(cur.State == runtime.ContainerExited && !podutil.ExitedContainerRestarts(in.Pod, &spec, int32(cur.ExitCode))) {
		// The container exited and waits to be restarted (or failed to be):
		// report the exit as the last state, as the kubelet does. One that
		// will not run again keeps its exit, whatever its last start said.
		if cs.State.Terminated != nil {
			cs.LastTerminationState.Terminated = cs.State.Terminated
			cs.State.Terminated = nil
		}
		cs.State.Waiting = &v1.ContainerStateWaiting{Reason: w.Reason, Message: w.Message}
	}
	return cs
}

func terminated(in Input, c *runtime.Container) *v1.ContainerStateTerminated {
	t := &v1.ContainerStateTerminated{
		ExitCode:    int32(c.ExitCode),
		StartedAt:   metav1.NewTime(c.StartedAt),
		FinishedAt:  metav1.NewTime(c.FinishedAt),
		ContainerID: in.RuntimeName + "://" + c.ID,
		Reason:      "Completed",
		Message:     joinMessage(c.Error, in.Messages[c.ID]),
	}
	switch {
	case c.OOMKilled:
		t.Reason = "OOMKilled"
	case c.Reason != "":
		t.Reason = c.Reason
	case c.ExitCode != 0 || c.Error != "":
		t.Reason = "Error"
	}
	return t
}
