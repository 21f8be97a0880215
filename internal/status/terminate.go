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

// TerminatePod and its helpers are adapted from k8s.io/kubernetes v1.37.2
// pkg/kubelet/status/status_manager.go: they read runlet's cached status.

package status

import (
	"github.com/runlet/runlet/internal/podconfig"
	"github.com/runlet/runlet/internal/podutil"
	v1 "k8s.io/api/core/v1"
)

// TerminatePod marks the final status of a pod whose worker finished it: a
// container without a terminated state (it never started, or its exit was
// not seen) is reported terminated with 137, and the phase is made terminal
// (Failed unless it already is) so that the pod can be deleted; a deleted
// pod whose containers never started would otherwise stay Pending.
func (m *Manager) TerminatePod(pod *v1.Pod) {
	m.mu.Lock()
	st := pod.Status.DeepCopy()
	if old, ok := m.statuses[pod.UID]; ok {
		st = old.Status.DeepCopy()
	}
	m.mu.Unlock()
	if hasPodInitialized(pod, st) {
		for i := range st.ContainerStatuses {
			terminateUnknown(&st.ContainerStatuses[i])
		}
	}
	// All but the final suffix of init containers with no evidence of a start.
	for i := range initializedContainers(st.InitContainerStatuses) {
		terminateUnknown(&st.InitContainerStatuses[i])
	}
	if !isTerminal(st.Phase) && !podconfig.IsStatic(pod) {
		// The kubelet leaves static pods' phase alone here (its TODO #116484).
		st.Phase = v1.PodFailed
	}
	m.SetPodStatus(pod, *st)
}

func terminateUnknown(cs *v1.ContainerStatus) {
	if cs.State.Terminated != nil {
		return
	}
	cs.State = v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
		Reason:   "ContainerStatusUnknown",
		Message:  "The container could not be located when the pod was terminated",
		ExitCode: 137,
	}}
}

// hasPodInitialized reports a pod with evidence of having started a regular
// container: then any of them not terminated is a failure.
func hasPodInitialized(pod *v1.Pod, st *v1.PodStatus) bool {
	if len(pod.Spec.InitContainers) == 0 {
		return true
	}
	for _, cs := range st.ContainerStatuses {
		if cs.LastTerminationState.Terminated != nil || cs.State.Waiting == nil {
			return true
		}
	}
	if l := len(st.InitContainerStatuses); l > 0 && l <= len(pod.Spec.InitContainers) {
		c, cs := &pod.Spec.InitContainers[l-1], st.InitContainerStatuses[l-1]
		if podutil.IsRestartableInitContainer(c) {
			return cs.State.Running != nil && cs.Started != nil && *cs.Started
		}
		for _, t := range []*v1.ContainerStateTerminated{cs.LastTerminationState.Terminated, cs.State.Terminated} {
			if t != nil && t.ExitCode == 0 {
				return true
			}
		}
	}
	return false
}

// initializedContainers returns all statuses but the final suffix of
// containers still waiting without ever having run; the first one at least.
func initializedContainers(containers []v1.ContainerStatus) []v1.ContainerStatus {
	for i := len(containers) - 1; i >= 0; i-- {
		if containers[i].State.Waiting == nil || containers[i].LastTerminationState.Terminated != nil {
			return containers[0 : i+1]
		}
	}
	if len(containers) > 0 {
		return containers[0:1]
	}
	return nil
}
