/*
Copyright 2014 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// The pod conditions the kubelet owns, adapted from k8s.io/kubernetes
// v1.37.2 pkg/kubelet/status/generate.go: the same reasons and messages
// ("containers with incomplete status: [init1 init2]"), which upstream specs
// compare verbatim. Generate stamps the observed generations.

package status

import (
	"fmt"
	"strings"

	"github.com/runlet/runlet/internal/podutil"
	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
)

// Condition reasons, as the kubelet's.
const (
	unknownContainerStatuses = "UnknownContainerStatuses"
	podCompleted             = "PodCompleted"
	podFailed                = "PodFailed"
	containersNotReady       = "ContainersNotReady"
	containersNotInitialized = "ContainersNotInitialized"
	readinessGatesNotReady   = "ReadinessGatesNotReady"
)

func conditions(pod *v1.Pod, st *v1.PodStatus, rs *runtime.PodStatus) []v1.PodCondition {
	all := append(append([]v1.ContainerStatus{}, st.InitContainerStatuses...), st.ContainerStatuses...)
	containersReady := containersReadyCondition(pod, all, st.Phase)
	scheduled := v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionTrue}
	if c := findCondition(pod.Status.Conditions, v1.PodScheduled); c != nil {
		scheduled.LastTransitionTime = c.LastTransitionTime
	}
	conds := []v1.PodCondition{
		readyToStartContainers(rs, st.Phase),
		initializedCondition(pod, all, st.Phase),
		containersReady,
		podReadyCondition(pod, pod.Status.Conditions, containersReady),
		scheduled,
	}
	return append(conds, foreignConditions(pod.Status.Conditions)...)
}

// podSandboxNotReady is the kubelet's reason for a false
// PodReadyToStartContainers (kubetypes.PodSandboxNotReadyReason).
const podSandboxNotReady = "PodSandboxNotReady"

// readyToStartContainers is True while the pod has a ready sandbox, whose
// network is set up; otherwise it says why, in the kubelet's words
// (kubetypes.PodSandboxNotReadyMsg*). A pod that reached a terminal phase
// has its sandbox torn down: it starts no container again.
func readyToStartContainers(rs *runtime.PodStatus, phase v1.PodPhase) v1.PodCondition {
	msg := ""
	switch sb := rs.Sandbox(); {
	case sb == nil:
		msg = "no pod sandbox exists"
	case sb.State != runtime.SandboxReady || phase == v1.PodSucceeded || phase == v1.PodFailed:
		msg = "pod sandbox is not ready"
	}
	if msg == "" {
		return v1.PodCondition{Type: v1.PodReadyToStartContainers, Status: v1.ConditionTrue}
	}
	return v1.PodCondition{Type: v1.PodReadyToStartContainers, Status: v1.ConditionFalse, Reason: podSandboxNotReady, Message: msg}
}

// containersReadyCondition is True when every regular container and every
// sidecar is ready.
func containersReadyCondition(pod *v1.Pod, statuses []v1.ContainerStatus, phase v1.PodPhase) v1.PodCondition {
	var unknown, unready []string
	check := func(c *v1.Container) {
		cs := find(statuses, c.Name)
		switch {
		case cs == nil:
			unknown = append(unknown, c.Name)
		case !cs.Ready:
			unready = append(unready, c.Name)
		}
	}
	for i := range pod.Spec.InitContainers {
		if podutil.IsRestartableInitContainer(&pod.Spec.InitContainers[i]) {
			check(&pod.Spec.InitContainers[i])
		}
	}
	for i := range pod.Spec.Containers {
		check(&pod.Spec.Containers[i])
	}
	switch {
	case phase == v1.PodSucceeded && len(unknown) == 0:
		return v1.PodCondition{Type: v1.ContainersReady, Status: v1.ConditionFalse, Reason: podCompleted}
	case phase == v1.PodFailed:
		// Its containers may still be terminating: not ready, whatever they say.
		return v1.PodCondition{Type: v1.ContainersReady, Status: v1.ConditionFalse, Reason: podFailed}
	}
	return containersCondition(v1.ContainersReady, containersNotReady, unknown, "unready", unready)
}

// containersCondition is True unless some containers' status is unknown or
// short of the condition, as the kubelet words it.
func containersCondition(t v1.PodConditionType, falseReason string, unknown []string, short string, shortOf []string) v1.PodCondition {
	var msgs []string
	if len(unknown) > 0 {
		msgs = append(msgs, fmt.Sprintf("containers with unknown status: %s", unknown))
	}
	if len(shortOf) > 0 {
		msgs = append(msgs, fmt.Sprintf("containers with %s status: %s", short, shortOf))
	}
	if len(msgs) > 0 {
		return v1.PodCondition{Type: t, Status: v1.ConditionFalse, Reason: falseReason, Message: strings.Join(msgs, ", ")}
	}
	return v1.PodCondition{Type: t, Status: v1.ConditionTrue}
}

// podReadyCondition follows ContainersReady, then the readiness gates.
func podReadyCondition(pod *v1.Pod, apiConds []v1.PodCondition, containersReady v1.PodCondition) v1.PodCondition {
	if containersReady.Status != v1.ConditionTrue {
		return v1.PodCondition{Type: v1.PodReady, Status: containersReady.Status,
			Reason: containersReady.Reason, Message: containersReady.Message}
	}
	var msgs []string
	for _, rg := range pod.Spec.ReadinessGates {
		c := findCondition(apiConds, rg.ConditionType)
		if c == nil {
			msgs = append(msgs, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", string(rg.ConditionType)))
		} else if c.Status != v1.ConditionTrue {
			msgs = append(msgs, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", string(rg.ConditionType), c.Status))
		}
	}
	if len(msgs) > 0 {
		return v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse, Reason: readinessGatesNotReady,
			Message: strings.Join(msgs, ", ")}
	}
	return v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionTrue}
}

// initializedCondition is True once every regular init container succeeded
// and every sidecar started, or once a regular container has run.
func initializedCondition(pod *v1.Pod, statuses []v1.ContainerStatus, phase v1.PodPhase) v1.PodCondition {
	var unknown, incomplete []string
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		cs := find(statuses, c.Name)
		switch {
		case cs == nil:
			unknown = append(unknown, c.Name)
		case !initContainerInitialized(c, cs):
			incomplete = append(incomplete, c.Name)
		}
	}
	if phase == v1.PodSucceeded && len(unknown) == 0 {
		return v1.PodCondition{Type: v1.PodInitialized, Status: v1.ConditionTrue, Reason: podCompleted}
	}
	if anyRegularContainerStarted(pod, statuses) {
		// Initialized before; its sidecars may be restarting.
		return v1.PodCondition{Type: v1.PodInitialized, Status: v1.ConditionTrue}
	}
	return containersCondition(v1.PodInitialized, containersNotInitialized, unknown, "incomplete", incomplete)
}

func initContainerInitialized(c *v1.Container, cs *v1.ContainerStatus) bool {
	if podutil.IsRestartableInitContainer(c) {
		return cs.Started != nil && *cs.Started
	}
	return cs.Ready
}

// anyRegularContainerStarted is the kubelet's HasAnyRegularContainerStarted.
func anyRegularContainerStarted(pod *v1.Pod, statuses []v1.ContainerStatus) bool {
	for i := range pod.Spec.Containers {
		cs := find(statuses, pod.Spec.Containers[i].Name)
		if cs != nil && (cs.State.Running != nil || cs.State.Terminated != nil) {
			return true
		}
	}
	return false
}

func findCondition(conds []v1.PodCondition, t v1.PodConditionType) *v1.PodCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}
