/*
Copyright 2016 The Kubernetes Authors.

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

// Ported from k8s.io/kubernetes v1.37.2 pkg/kubelet/eviction/eviction_manager.go:
// the local storage limit evictions (LocalStorageCapacityIsolation, on by
// default), with the memory-backed volumes' feature gate off, as by default.
// Added: hasStorageLimits, so the pods' usage is measured only when some pod
// has a limit to check.

package eviction

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// hasStorageLimits reports a pod whose local storage has a limit: an
// emptyDir sizeLimit, or an ephemeral-storage limit of the pod or of a
// container.
func hasStorageLimits(pod *v1.Pod) bool {
	for _, vol := range pod.Spec.Volumes {
		if vol.EmptyDir != nil && vol.EmptyDir.SizeLimit != nil && vol.EmptyDir.SizeLimit.Sign() == 1 {
			return true
		}
	}
	_, found := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})[v1.ResourceEphemeralStorage]
	return found
}

// localStorageEviction checks the EmptyDir volume usage for each pod and determine whether it exceeds the specified limit and needs
// to be evicted. It also checks every container in the pod, if the container overlay usage exceeds the limit, the pod will be evicted too.
func (m *Manager) localStorageEviction(pods []*v1.Pod, statsFunc statsFunc) []*v1.Pod {
	evicted := []*v1.Pod{}
	for _, pod := range pods {
		podStats, ok := statsFunc(pod)
		if !ok {
			continue
		}
		if m.emptyDirLimitEviction(podStats.VolumeStats, pod) {
			evicted = append(evicted, pod)
			continue
		}
		if m.podEphemeralStorageLimitEviction(podStats.EphemeralStorage, pod) {
			evicted = append(evicted, pod)
			continue
		}
		if m.containerEphemeralStorageLimitEviction(podStats.Containers, pod) {
			evicted = append(evicted, pod)
		}
	}
	return evicted
}

func (m *Manager) emptyDirLimitEviction(volumeStats []statsapi.VolumeStats, pod *v1.Pod) bool {
	podVolumeUsed := make(map[string]*resource.Quantity)
	for _, volume := range volumeStats {
		podVolumeUsed[volume.Name] = diskUsage(&volume.FsStats)
	}
	for i := range pod.Spec.Volumes {
		source := &pod.Spec.Volumes[i].VolumeSource
		if source.EmptyDir != nil {
			size := source.EmptyDir.SizeLimit
			used := podVolumeUsed[pod.Spec.Volumes[i].Name]
			if used != nil && size != nil && size.Sign() == 1 && used.Cmp(*size) > 0 {
				// the emptyDir usage exceeds the size limit, evict the pod
				return m.evictPod(pod, immediateEvictionGracePeriodSeconds, fmt.Sprintf(emptyDirMessageFmt, pod.Spec.Volumes[i].Name, size.String()), nil, nil)
			}
		}
	}
	return false
}

func (m *Manager) podEphemeralStorageLimitEviction(ephemeral *statsapi.FsStats, pod *v1.Pod) bool {
	podLimits := resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{})
	podEphemeralStorageLimit, found := podLimits[v1.ResourceEphemeralStorage]
	if !found {
		return false
	}
	// pod stats api summarizes ephemeral storage usage (container, emptyDir, host[etc-hosts, logs])
	podEphemeralStorageTotalUsage := &resource.Quantity{}
	if ephemeral != nil && ephemeral.UsedBytes != nil {
		podEphemeralStorageTotalUsage = diskUsage(ephemeral)
	}
	if podEphemeralStorageTotalUsage.Cmp(podEphemeralStorageLimit) > 0 {
		// the total usage of pod exceeds the total size limit of containers, evict the pod
		message := fmt.Sprintf(podEphemeralStorageMessageFmt, podEphemeralStorageLimit.String())
		return m.evictPod(pod, immediateEvictionGracePeriodSeconds, message, nil, nil)
	}
	return false
}

func (m *Manager) containerEphemeralStorageLimitEviction(containers []statsapi.ContainerStats, pod *v1.Pod) bool {
	thresholdsMap := make(map[string]*resource.Quantity)
	for _, container := range pod.Spec.Containers {
		ephemeralLimit := container.Resources.Limits.StorageEphemeral()
		if ephemeralLimit != nil && ephemeralLimit.Value() != 0 {
			thresholdsMap[container.Name] = ephemeralLimit
		}
	}
	for _, container := range pod.Spec.InitContainers {
		if container.RestartPolicy == nil || *container.RestartPolicy != v1.ContainerRestartPolicyAlways {
			continue
		}
		ephemeralLimit := container.Resources.Limits.StorageEphemeral()
		if ephemeralLimit != nil && ephemeralLimit.Value() != 0 {
			thresholdsMap[container.Name] = ephemeralLimit
		}
	}

	for _, containerStat := range containers {
		containerUsed := diskUsage(containerStat.Logs)
		if !m.dedicatedImageFs {
			containerUsed.Add(*diskUsage(containerStat.Rootfs))
		}
		if ephemeralStorageThreshold, ok := thresholdsMap[containerStat.Name]; ok {
			if ephemeralStorageThreshold.Cmp(*containerUsed) < 0 {
				return m.evictPod(pod, immediateEvictionGracePeriodSeconds, fmt.Sprintf(containerEphemeralStorageMessageFmt, containerStat.Name, ephemeralStorageThreshold.String()), nil, nil)
			}
		}
	}
	return false
}
