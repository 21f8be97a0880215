/*
Copyright 2015 The Kubernetes Authors.

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

package qos

// Copied from k8s.io/kubernetes v1.37.2 pkg/kubelet/qos/policy.go and
// helpers.go (GetContainerOOMScoreAdjust and its helpers), without the DRA
// parts (off by default); IsNodeCriticalPod is pkg/kubelet/types'.

import (
	v1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"
)

const (
	guaranteedOOMScoreAdj int = -997
	besteffortOOMScoreAdj int = 1000

	// systemCriticalPriority is scheduling.SystemCriticalPriority.
	systemCriticalPriority = 2 * int32(1000000000)
	systemNodeCritical     = "system-node-critical"
	configSourceAnnotation = "kubernetes.io/config.source"
	configMirrorAnnotation = "kubernetes.io/config.mirror"
)

// GetContainerOOMScoreAdjust returns the amount by which the OOM score of all processes in the
// container should be adjusted.
// The OOM score of a process is the percentage of memory it consumes
// multiplied by 10 (barring exceptional cases) + a configurable quantity which is between -1000
// and 1000. Containers with higher OOM scores are killed if the system runs out of memory.
// See https://lwn.net/Articles/391222/ for more information.
func GetContainerOOMScoreAdjust(pod *v1.Pod, container *v1.Container, memoryCapacity int64) int {
	if isNodeCriticalPod(pod) {
		// Only node critical pod should be the last to get killed.
		return guaranteedOOMScoreAdj
	}

	switch GetPodQOS(pod) {
	case v1.PodQOSGuaranteed:
		// Guaranteed containers should be the last to get killed.
		return guaranteedOOMScoreAdj
	case v1.PodQOSBestEffort:
		return besteffortOOMScoreAdj
	}
	if memoryCapacity <= 0 {
		// runlet: no capacity known, no heuristic (upstream would divide by zero).
		return besteffortOOMScoreAdj - 1
	}

	// Burstable containers are a middle tier, between Guaranteed and Best-Effort. Ideally,
	// we want to protect Burstable containers that consume less memory than requested.
	// The formula below is a heuristic. A container requesting for 10% of a system's
	// memory will have an OOM score adjust of 900. If a process in container Y
	// uses over 10% of memory, its OOM score will be 1000. The idea is that containers
	// which use more than their request will have an OOM score of 1000 and will be prime
	// targets for OOM kills.
	// Note that this is a heuristic, it won't work if a container has many small processes.
	containerMemReq := container.Resources.Requests.Memory().Value()

	var oomScoreAdjust, remainingReqPerContainer int64
	if resourcehelper.IsPodLevelRequestsSet(pod) {
		remainingReqPerContainer = remainingPodMemReqPerContainer(pod)
		oomScoreAdjust = 1000 - permille(containerMemReq+remainingReqPerContainer, memoryCapacity)
	} else {
		oomScoreAdjust = 1000 - permille(containerMemReq, memoryCapacity)
	}

	// adapt the sidecarContainer memoryRequest for OOM ADJ calculation
	// calculate the oom score adjustment based on: max-memory( currentSideCarContainer , min-memory(regular containers) ) .
	if isSidecarContainer(pod, container) && len(pod.Spec.Containers) > 0 {
		// check min memory quantity in regular containers
		minMemoryRequest := minRegularContainerMemory(pod)
		if resourcehelper.IsPodLevelRequestsSet(pod) {
			minMemoryRequest += remainingReqPerContainer
		}
		minMemoryOomScoreAdjust := 1000 - permille(minMemoryRequest, memoryCapacity)
		// the OOM adjustment for sidecar container will match
		// or fall below the OOM score adjustment of regular containers in the Pod.
		if oomScoreAdjust > minMemoryOomScoreAdjust {
			oomScoreAdjust = minMemoryOomScoreAdjust
		}
	}

	// A guaranteed pod using 100% of memory can have an OOM score of 10. Ensure
	// that burstable pods have a higher OOM score adjustment.
	if int(oomScoreAdjust) < (1000 + guaranteedOOMScoreAdj) {
		return (1000 + guaranteedOOMScoreAdj)
	}
	// Give burstable pods a higher chance of survival over besteffort pods.
	if int(oomScoreAdjust) == besteffortOOMScoreAdj {
		return int(oomScoreAdjust - 1)
	}
	return int(oomScoreAdjust)
}

// isSidecarContainer returns a boolean indicating whether a container is a sidecar or not.
func isSidecarContainer(pod *v1.Pod, container *v1.Container) bool {
	if container.RestartPolicy != nil && *container.RestartPolicy == v1.ContainerRestartPolicyAlways {
		for _, initContainer := range pod.Spec.InitContainers {
			if initContainer.Name == container.Name {
				return true
			}
		}
	}
	return false
}

func minRegularContainerMemory(pod *v1.Pod) int64 {
	memoryValue := pod.Spec.Containers[0].Resources.Requests.Memory().Value()
	for i := 1; i < len(pod.Spec.Containers); i++ {
		if m := pod.Spec.Containers[i].Resources.Requests.Memory().Value(); m < memoryValue {
			memoryValue = m
		}
	}
	return memoryValue
}

// remainingPodMemReqPerContainer is the pod's memory request not given to
// any container, shared equally among them.
func remainingPodMemReqPerContainer(pod *v1.Pod) int64 {
	if pod.Spec.Resources.Requests.Memory().IsZero() {
		return 0
	}
	numContainers := len(pod.Spec.Containers) + len(pod.Spec.InitContainers)
	if numContainers == 0 {
		return 0
	}
	aggrContainerReqs := resourcehelper.AggregateContainerRequests(pod, resourcehelper.PodResourcesOptions{})
	remainingMemory := pod.Spec.Resources.Requests.Memory().Value() - aggrContainerReqs.Memory().Value()
	return max(remainingMemory, 0) / int64(numContainers)
}

// isNodeCriticalPod is pkg/kubelet/types.IsNodeCriticalPod: a static,
// mirror or system-critical-priority pod of class system-node-critical.
func isNodeCriticalPod(pod *v1.Pod) bool {
	critical := pod.Annotations[configMirrorAnnotation] != "" ||
		(pod.Annotations[configSourceAnnotation] != "" && pod.Annotations[configSourceAnnotation] != "api") ||
		(pod.Spec.Priority != nil && *pod.Spec.Priority >= systemCriticalPriority)
	return critical && pod.Spec.PriorityClassName == systemNodeCritical
}

// permille is 1000*req/capacity, saturated at 1000 (runlet: upstream's
// product overflows for requests of exabytes, which admission refuses only
// later, and the score went out of range).
func permille(req, capacity int64) int64 {
	if req < 0 || req >= capacity {
		if req < 0 {
			return 0
		}
		return 1000
	}
	return 1000 * req / capacity
}
