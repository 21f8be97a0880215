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
// the eviction manager's pod admission handler.

package eviction

import (
	"fmt"

	"github.com/go-logr/logr"
	"github.com/runlet/runlet/internal/qos"
	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
)

// Admit rejects a pod if its not safe to admit for node stability: under
// disk or PID pressure no pod but a critical one, under memory pressure
// alone no BestEffort pod that does not tolerate it.
func (m *Manager) Admit(pod *v1.Pod) (admit bool, reason, message string) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if len(m.nodeConditions) == 0 {
		return true, "", ""
	}
	// Admit Critical pods even under resource pressure since they are required for system stability.
	// https://github.com/kubernetes/kubernetes/issues/40573 has more details.
	if isCriticalPod(pod) {
		return true, "", ""
	}
	// Conditions other than memory pressure reject all pods
	nodeOnlyHasMemoryPressureCondition := hasNodeCondition(m.nodeConditions, v1.NodeMemoryPressure) && len(m.nodeConditions) == 1
	if nodeOnlyHasMemoryPressureCondition {
		notBestEffort := v1.PodQOSBestEffort != qos.GetPodQOS(pod)
		if notBestEffort {
			return true, "", ""
		}
		// When node has memory pressure, check BestEffort Pod's toleration:
		// admit it if tolerates memory pressure taint, fail for other tolerations, e.g. DiskPressure.
		if corev1helpers.TolerationsTolerateTaint(logr.Discard(), pod.Spec.Tolerations, &v1.Taint{
			Key:    v1.TaintNodeMemoryPressure,
			Effect: v1.TaintEffectNoSchedule,
		}, false) {
			return true, "", ""
		}
	}
	return false, Reason, fmt.Sprintf(nodeConditionMessageFmt, m.nodeConditions)
}
