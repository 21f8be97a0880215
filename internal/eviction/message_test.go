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

// TestEvictionMessage's cases are ported from k8s.io/kubernetes v1.37.2
// pkg/kubelet/eviction/helpers_test.go; TestDiskEvictionMessage is runlet's.

package eviction

import (
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

func TestEvictionMessage(t *testing.T) {
	type stat struct{ name, usage string }
	type exceeded struct{ name, request, usage string }
	expected := func(podMessage string, containers []exceeded) string {
		msg := ""
		for _, c := range containers {
			msg += fmt.Sprintf(containerMessageFmt, c.name, c.usage, c.request, v1.ResourceMemory)
		}
		return fmt.Sprintf(nodeLowMessageFmt, v1.ResourceMemory) + podMessage + msg
	}
	const podName = "pod-eviction-message"
	mem := func(m string) v1.ResourceList { return newResourceList("", m, "") }
	testCases := []struct {
		name           string
		podResources   v1.ResourceRequirements
		initContainers []v1.Container
		containers     []v1.Container
		ephemeral      []v1.EphemeralContainer
		podMemory      string
		stats          []stat
		want           []exceeded
		annotations    map[string]string
	}{
		{
			name:           "No container exceeds memory usage",
			initContainers: []v1.Container{newContainer("init1", mem("100Mi"), nil), newRestartableInitContainer("restartable-init1", mem("200Mi"), nil)},
			containers:     []v1.Container{newContainer("regular1", mem("200Mi"), nil)},
			stats:          []stat{{"restartable-init1", "150Mi"}, {"regular1", "100Mi"}},
		},
		{
			name:           "Init container exceeds memory usage",
			initContainers: []v1.Container{newContainer("init1", mem("100Mi"), nil), newRestartableInitContainer("restartable-init1", mem("200Mi"), nil), newContainer("init2", mem("150Mi"), nil)},
			containers:     []v1.Container{newContainer("regular1", mem("200Mi"), nil)},
			stats:          []stat{{"init1", "150Mi"}},
			want:           []exceeded{{"init1", "100Mi", "150Mi"}},
			annotations:    map[string]string{OffendingContainersKey: "init1", OffendingContainersUsageKey: "150Mi"},
		},
		{
			name:           "Regular container exceeds memory usage",
			initContainers: []v1.Container{newContainer("init1", mem("100Mi"), nil), newRestartableInitContainer("restartable-init1", mem("200Mi"), nil)},
			containers:     []v1.Container{newContainer("regular1", mem("200Mi"), nil), newContainer("regular2", mem("300Mi"), nil)},
			stats:          []stat{{"restartable-init1", "200Mi"}, {"regular1", "250Mi"}, {"regular2", "250Mi"}},
			want:           []exceeded{{"regular1", "200Mi", "250Mi"}},
			annotations:    map[string]string{OffendingContainersKey: "regular1", OffendingContainersUsageKey: "250Mi"},
		},
		{
			name:           "Ephemeral container exceeds memory usage",
			initContainers: []v1.Container{newContainer("init1", mem("100Mi"), nil)},
			containers:     []v1.Container{newContainer("regular1", mem("200Mi"), nil)},
			ephemeral:      []v1.EphemeralContainer{{TargetContainerName: "regular1", EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "ephemeral1"}}},
			stats:          []stat{{"regular1", "150Mi"}, {"ephemeral1", "250Mi"}},
		},
		{
			name:           "Both regular and restartable init containers exceed memory usage due to missing memory requests",
			initContainers: []v1.Container{newContainer("init1", mem("100Mi"), nil), newRestartableInitContainer("restartable-init1", nil, nil), newRestartableInitContainer("restartable-init2", mem("300Mi"), nil)},
			containers:     []v1.Container{newContainer("regular1", nil, nil)},
			stats:          []stat{{"restartable-init1", "250Mi"}, {"restartable-init2", "250Mi"}, {"regular1", "200Mi"}},
			want:           []exceeded{{"restartable-init1", "0", "250Mi"}, {"regular1", "0", "200Mi"}},
			annotations:    map[string]string{OffendingContainersKey: "restartable-init1,regular1", OffendingContainersUsageKey: "250Mi,200Mi"},
		},
		{
			name:         "Regular pod with pod level resources exceeds memory usage",
			podResources: v1.ResourceRequirements{Requests: mem("250Mi"), Limits: mem("1000Mi")},
			podMemory:    "600Mi",
			containers:   []v1.Container{newContainer("regular1", nil, nil), newContainer("regular2", nil, nil)},
			stats:        []stat{{"regular1", "250Mi"}, {"regular2", "350Mi"}},
			want:         []exceeded{{"regular1", "0", "250Mi"}, {"regular2", "0", "350Mi"}},
			annotations: map[string]string{OffendingPodKey: podName, OffendingPodUsageKey: "600Mi",
				OffendingContainersKey: "regular1,regular2", OffendingContainersUsageKey: "250Mi,350Mi"},
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			pod := newPodWithInitContainers(podName, 1, tc.podResources, tc.initContainers, tc.containers, nil)
			pod.Spec.EphemeralContainers = tc.ephemeral
			dummy := resource.MustParse("1Mi")
			podMessage := ""
			if tc.podMemory != "" {
				dummy = resource.MustParse(tc.podMemory)
				podMessage = fmt.Sprintf(podMessageFmt, pod.Name, tc.podMemory, tc.podResources.Requests.Memory(), v1.ResourceMemory)
			}
			ps := newPodMemoryStats(pod, dummy)
			ps.Containers = nil
			for _, s := range tc.stats {
				q := resource.MustParse(s.usage)
				b := uint64(q.Value())
				ps.Containers = append(ps.Containers, statsapi.ContainerStats{Name: s.name, Memory: &statsapi.MemoryStats{WorkingSetBytes: &b}})
			}
			msg, annotations := evictionMessage(v1.ResourceMemory, pod, statsOf(map[*v1.Pod]statsapi.PodStats{pod: ps}), nil, signalObservations{})
			if want := expected(podMessage, tc.want); msg != want {
				t.Errorf("message %q; want %q", msg, want)
			}
			for _, key := range []string{OffendingContainersKey, OffendingContainersUsageKey, OffendingPodKey, OffendingPodUsageKey} {
				if annotations[key] != tc.annotations[key] {
					t.Errorf("annotation %s = %q; want %q", key, annotations[key], tc.annotations[key])
				}
			}
		})
	}
}

// TestDiskEvictionMessage: the message under disk pressure names the
// threshold, what was available, and each container using more than its
// request (writable layer and logs), as the kubelet writes it.
func TestDiskEvictionMessage(t *testing.T) {
	emptyDir := []v1.Volume{newVolume("data", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}})}
	pod := newPod("filler", defaultPriority, []v1.Container{newContainer("fill", nil, nil), newContainer("idle", newResourceList("", "", "1Mi"), nil)}, emptyDir)
	ps := newPodDiskStats(pod, resource.MustParse("12Ki"), resource.MustParse("4Ki"), resource.MustParse("60Mi"))
	thresholds := []Threshold{{Signal: SignalNodeFsAvailable, Operator: OpLessThan, Value: ThresholdValue{Percentage: 0.1}}}
	obs := signalObservations{SignalNodeFsAvailable: {available: resource.NewQuantity(3<<20, resource.BinarySI), capacity: resource.NewQuantity(64<<20, resource.BinarySI)}}
	msg, annotations := evictionMessage(v1.ResourceEphemeralStorage, pod, statsOf(map[*v1.Pod]statsapi.PodStats{pod: ps}), thresholds, obs)
	want := "The node was low on resource: ephemeral-storage. Threshold quantity: 6710886, available: 3Mi. " +
		"Container fill was using 16Ki, request is 0, has larger consumption of ephemeral-storage. "
	if msg != want {
		t.Errorf("message\n%q\nwant\n%q", msg, want)
	}
	if annotations[OffendingContainersKey] != "fill" || annotations[StarvedResourceKey] != "ephemeral-storage" {
		t.Errorf("annotations %v", annotations)
	}
	if !strings.HasPrefix(msg, "The node was low on resource: ") {
		t.Error("message prefix")
	}
}
