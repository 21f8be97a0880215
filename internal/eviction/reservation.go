/*
Copyright 2017 The Kubernetes Authors.

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

// Copied from k8s.io/kubernetes v1.37.2 pkg/kubelet/cm/helpers.go
// (hardEvictionReservation).

package eviction

import (
	v1 "k8s.io/api/core/v1"
)

// HardEvictionReservation returns the resources the hard eviction
// thresholds keep from pods: node allocatable is capacity minus the
// reservations minus these (memory.available and nodefs.available).
func HardEvictionReservation(thresholds []Threshold, capacity v1.ResourceList) v1.ResourceList {
	if len(thresholds) == 0 {
		return nil
	}
	ret := v1.ResourceList{}
	for _, threshold := range thresholds {
		if threshold.Operator != OpLessThan {
			continue
		}
		switch threshold.Signal {
		case SignalMemoryAvailable:
			memoryCapacity := capacity[v1.ResourceMemory]
			value := GetThresholdQuantity(threshold.Value, &memoryCapacity)
			ret[v1.ResourceMemory] = *value
		case SignalNodeFsAvailable:
			storageCapacity := capacity[v1.ResourceEphemeralStorage]
			value := GetThresholdQuantity(threshold.Value, &storageCapacity)
			ret[v1.ResourceEphemeralStorage] = *value
		}
	}
	return ret
}
