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

// The ordering cases are ported from k8s.io/kubernetes v1.37.2
// pkg/kubelet/eviction/helpers_test.go; TestRankQoS and the runlet rank
// functions' tests are runlet's own.

package eviction

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

func expectOrder(t *testing.T, pods, expected []*v1.Pod) {
	t.Helper()
	for i := range expected {
		if pods[i] != expected[i] {
			t.Errorf("pod[%d] = %s; want %s", i, pods[i].Name, expected[i].Name)
		}
	}
}

func TestOrderedByExceedsRequestMemory(t *testing.T) {
	below := newPod("below-requests", -1, []v1.Container{newContainer("below-requests", newResourceList("", "200Mi", ""), nil)}, nil)
	exceeds := newPod("exceeds-requests", 1, []v1.Container{newContainer("exceeds-requests", newResourceList("", "100Mi", ""), nil)}, nil)
	statsFn := statsOf(map[*v1.Pod]statsapi.PodStats{
		below:   newPodMemoryStats(below, resource.MustParse("199Mi")),   // -1 relative to request
		exceeds: newPodMemoryStats(exceeds, resource.MustParse("101Mi")), // 1 relative to request
	})
	pods := []*v1.Pod{below, exceeds}
	orderedBy(exceedMemoryRequests(statsFn)).Sort(pods)
	expectOrder(t, pods, []*v1.Pod{exceeds, below})
}

func TestOrderedByExceedsRequestDisk(t *testing.T) {
	below := newPod("below-requests", -1, []v1.Container{newContainer("below-requests", v1.ResourceList{v1.ResourceEphemeralStorage: resource.MustParse("200Mi")}, nil)}, nil)
	exceeds := newPod("exceeds-requests", 1, []v1.Container{newContainer("exceeds-requests", v1.ResourceList{v1.ResourceEphemeralStorage: resource.MustParse("100Mi")}, nil)}, nil)
	statsFn := statsOf(map[*v1.Pod]statsapi.PodStats{
		below:   newPodDiskStats(below, resource.MustParse("100Mi"), resource.MustParse("99Mi"), resource.MustParse("0Mi")),  // -1 relative to request
		exceeds: newPodDiskStats(exceeds, resource.MustParse("90Mi"), resource.MustParse("11Mi"), resource.MustParse("0Mi")), // 1 relative to request
	})
	pods := []*v1.Pod{below, exceeds}
	orderedBy(exceedDiskRequests(statsFn, []fsStatsType{fsStatsRoot, fsStatsLogs, fsStatsLocalVolumeSource}, v1.ResourceEphemeralStorage)).Sort(pods)
	expectOrder(t, pods, []*v1.Pod{exceeds, below})
}

func TestOrderedByPriority(t *testing.T) {
	low := newPod("low-priority", -134, []v1.Container{newContainer("low-priority", nil, nil)}, nil)
	medium := newPod("medium-priority", 1, []v1.Container{newContainer("medium-priority", newResourceList("100m", "100Mi", ""), newResourceList("200m", "200Mi", ""))}, nil)
	high := newPod("high-priority", 12534, []v1.Container{newContainer("high-priority", newResourceList("200m", "200Mi", ""), newResourceList("200m", "200Mi", ""))}, nil)
	pods := []*v1.Pod{high, medium, low}
	orderedBy(priority).Sort(pods)
	expectOrder(t, pods, []*v1.Pod{low, medium, high})
}

func TestOrderedbyDisk(t *testing.T) {
	emptyDir := []v1.Volume{newVolume("local-volume", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}})}
	mk := func(name, req, lim string) *v1.Pod {
		return newPod(name, defaultPriority, []v1.Container{newContainer(name, newResourceList("", "", req), newResourceList("", "", lim))}, emptyDir)
	}
	pod1, pod2 := mk("best-effort-high", "", ""), mk("best-effort-low", "", "")
	pod3, pod4 := mk("burstable-high", "100Mi", "400Mi"), mk("burstable-low", "100Mi", "400Mi")
	pod5, pod6 := mk("guaranteed-high", "400Mi", "400Mi"), mk("guaranteed-low", "400Mi", "400Mi")
	q := resource.MustParse
	statsFn := statsOf(map[*v1.Pod]statsapi.PodStats{
		pod1: newPodDiskStats(pod1, q("50Mi"), q("100Mi"), q("150Mi")), // 300Mi - 0 = 300Mi
		pod2: newPodDiskStats(pod2, q("25Mi"), q("25Mi"), q("50Mi")),   // 100Mi - 0 = 100Mi
		pod3: newPodDiskStats(pod3, q("150Mi"), q("150Mi"), q("50Mi")), // 350Mi - 100Mi = 250Mi
		pod4: newPodDiskStats(pod4, q("25Mi"), q("35Mi"), q("50Mi")),   // 110Mi - 100Mi = 10Mi
		pod5: newPodDiskStats(pod5, q("225Mi"), q("100Mi"), q("50Mi")), // 375Mi - 400Mi = -25Mi
		pod6: newPodDiskStats(pod6, q("25Mi"), q("45Mi"), q("50Mi")),   // 120Mi - 400Mi = -280Mi
	})
	pods := []*v1.Pod{pod1, pod2, pod3, pod4, pod5, pod6}
	orderedBy(disk(statsFn, []fsStatsType{fsStatsRoot, fsStatsLogs, fsStatsLocalVolumeSource}, v1.ResourceEphemeralStorage)).Sort(pods)
	expectOrder(t, pods, []*v1.Pod{pod1, pod3, pod2, pod4, pod5, pod6})
}

func TestOrderedbyInodes(t *testing.T) {
	emptyDir := []v1.Volume{newVolume("local-volume", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}})}
	low := newPod("low", defaultPriority, []v1.Container{newContainer("low", nil, nil)}, emptyDir)
	medium := newPod("medium", defaultPriority, []v1.Container{newContainer("medium", nil, nil)}, emptyDir)
	high := newPod("high", defaultPriority, []v1.Container{newContainer("high", nil, nil)}, emptyDir)
	q := resource.MustParse
	statsFn := statsOf(map[*v1.Pod]statsapi.PodStats{
		low:    newPodInodeStats(low, q("50000"), q("100000"), q("50000")),     // 200000
		medium: newPodInodeStats(medium, q("100000"), q("150000"), q("50000")), // 300000
		high:   newPodInodeStats(high, q("200000"), q("150000"), q("50000")),   // 400000
	})
	pods := []*v1.Pod{low, medium, high}
	orderedBy(disk(statsFn, []fsStatsType{fsStatsRoot, fsStatsLogs, fsStatsLocalVolumeSource}, resourceInodes)).Sort(pods)
	expectOrder(t, pods, []*v1.Pod{high, medium, low})
}

func TestOrderedByMemory(t *testing.T) {
	mk := func(name, req, lim string) *v1.Pod {
		return newPod(name, defaultPriority, []v1.Container{newContainer(name, newResourceList("", req, ""), newResourceList("", lim, ""))}, nil)
	}
	pod1, pod2 := mk("best-effort-high", "", ""), mk("best-effort-low", "", "")
	pod3, pod4 := mk("burstable-high", "100Mi", "1Gi"), mk("burstable-low", "100Mi", "1Gi")
	pod5, pod6 := mk("guaranteed-high", "1Gi", "1Gi"), mk("guaranteed-low", "1Gi", "1Gi")
	q := resource.MustParse
	statsFn := statsOf(map[*v1.Pod]statsapi.PodStats{
		pod1: newPodMemoryStats(pod1, q("500Mi")), // 500 relative to request
		pod2: newPodMemoryStats(pod2, q("300Mi")), // 300 relative to request
		pod3: newPodMemoryStats(pod3, q("800Mi")), // 700 relative to request
		pod4: newPodMemoryStats(pod4, q("300Mi")), // 200 relative to request
		pod5: newPodMemoryStats(pod5, q("800Mi")), // -200 relative to request
		pod6: newPodMemoryStats(pod6, q("200Mi")), // -800 relative to request
	})
	pods := []*v1.Pod{pod1, pod2, pod3, pod4, pod5, pod6}
	orderedBy(memory(statsFn)).Sort(pods)
	expectOrder(t, pods, []*v1.Pod{pod3, pod1, pod2, pod4, pod5, pod6})
}

// TestOrderedByPriorityMemory ensures we order by priority and then memory consumption relative to request.
func TestOrderedByPriorityMemory(t *testing.T) {
	mk := func(name string, prio int32, req string) *v1.Pod {
		return newPod(name, prio, []v1.Container{newContainer(name, newResourceList("", req, ""), nil)}, nil)
	}
	pod1 := mk("above-requests-low-priority-high-usage", lowPriority, "")
	pod2 := mk("above-requests-low-priority-low-usage", lowPriority, "")
	pod3 := mk("above-requests-high-priority-high-usage", highPriority, "100Mi")
	pod4 := mk("above-requests-high-priority-low-usage", highPriority, "100Mi")
	pod5 := mk("below-requests-low-priority-high-usage", lowPriority, "1Gi")
	pod6 := mk("below-requests-low-priority-low-usage", lowPriority, "1Gi")
	pod7 := mk("below-requests-high-priority-high-usage", highPriority, "1Gi")
	pod8 := mk("below-requests-high-priority-low-usage", highPriority, "1Gi")
	q := resource.MustParse
	statsFn := statsOf(map[*v1.Pod]statsapi.PodStats{
		pod1: newPodMemoryStats(pod1, q("500Mi")), pod2: newPodMemoryStats(pod2, q("50Mi")),
		pod3: newPodMemoryStats(pod3, q("600Mi")), pod4: newPodMemoryStats(pod4, q("150Mi")),
		pod5: newPodMemoryStats(pod5, q("800Mi")), pod6: newPodMemoryStats(pod6, q("200Mi")),
		pod7: newPodMemoryStats(pod7, q("800Mi")), pod8: newPodMemoryStats(pod8, q("200Mi")),
	})
	pods := []*v1.Pod{pod8, pod7, pod6, pod5, pod4, pod3, pod2, pod1}
	rankMemoryPressure(pods, statsFn)
	expectOrder(t, pods, []*v1.Pod{pod1, pod2, pod3, pod4, pod5, pod6, pod7, pod8})
}

// TestOrderedByPriorityProcess ensures we order by priority and then process consumption relative to request.
func TestOrderedByPriorityProcess(t *testing.T) {
	pod1 := newPod("low-priority-high-usage", lowPriority, nil, nil)
	pod2 := newPod("low-priority-low-usage", lowPriority, nil, nil)
	pod3 := newPod("high-priority-high-usage", highPriority, nil, nil)
	pod4 := newPod("high-priority-low-usage", highPriority, nil, nil)
	statsFn := statsOf(map[*v1.Pod]statsapi.PodStats{
		pod1: newPodProcessStats(pod1, 20), pod2: newPodProcessStats(pod2, 6),
		pod3: newPodProcessStats(pod3, 20), pod4: newPodProcessStats(pod4, 5),
	})
	pods := []*v1.Pod{pod4, pod3, pod2, pod1}
	rankPIDPressure(pods, statsFn)
	expectOrder(t, pods, []*v1.Pod{pod1, pod2, pod3, pod4})
}

// TestRankQoS: under memory pressure at one priority, the kubelet's rank
// puts BestEffort pods (any use exceeds their zero request) first, then
// Burstable pods over their requests, then Guaranteed pods, which cannot
// exceed theirs; a pod without stats goes before all.
func TestRankQoS(t *testing.T) {
	q := resource.MustParse
	guaranteed := newPod("guaranteed", defaultPriority, []v1.Container{newContainer("c", newResourceList("100m", "1Gi", ""), newResourceList("100m", "1Gi", ""))}, nil)
	burstableOver := newPod("burstable-over", defaultPriority, []v1.Container{newContainer("c", newResourceList("", "100Mi", ""), nil)}, nil)
	burstableUnder := newPod("burstable-under", defaultPriority, []v1.Container{newContainer("c", newResourceList("", "900Mi", ""), nil)}, nil)
	bestEffort := newPod("best-effort", defaultPriority, []v1.Container{newContainer("c", nil, nil)}, nil)
	noStats := newPod("no-stats", highPriority, []v1.Container{newContainer("c", nil, nil)}, nil)
	statsFn := statsOf(map[*v1.Pod]statsapi.PodStats{
		guaranteed:     newPodMemoryStats(guaranteed, q("900Mi")),
		burstableOver:  newPodMemoryStats(burstableOver, q("600Mi")),
		burstableUnder: newPodMemoryStats(burstableUnder, q("800Mi")),
		bestEffort:     newPodMemoryStats(bestEffort, q("10Mi")),
	})
	pods := []*v1.Pod{guaranteed, burstableUnder, burstableOver, bestEffort, noStats}
	rankMemoryPressure(pods, statsFn)
	// Among those over their requests, the larger use above request goes first.
	expectOrder(t, pods, []*v1.Pod{noStats, burstableOver, bestEffort, burstableUnder, guaranteed})

	// On disk, the same rule with the ephemeral-storage requests.
	emptyDir := []v1.Volume{newVolume("data", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}})}
	filler := newPod("filler", highPriority, []v1.Container{newContainer("c", newResourceList("", "", "1Mi"), nil)}, emptyDir)
	quiet := newPod("quiet", lowPriority, []v1.Container{newContainer("c", nil, nil)}, emptyDir)
	diskStats := statsOf(map[*v1.Pod]statsapi.PodStats{
		filler: newPodDiskStats(filler, q("0"), q("0"), q("50Mi")),
		quiet:  newPodDiskStats(quiet, q("0"), q("0"), q("0")),
	})
	pods = []*v1.Pod{quiet, filler}
	buildSignalToRankFunc(true)[SignalNodeFsAvailable](pods, diskStats)
	expectOrder(t, pods, []*v1.Pod{filler, quiet})
}

// TestRankFuncsPerFilesystem: with a dedicated imagefs the nodefs holds the
// pods' volumes only, and the imagefs the containers' layers and logs
// (podman keeps logs beside the layers); on one filesystem all count.
func TestRankFuncsPerFilesystem(t *testing.T) {
	q := resource.MustParse
	emptyDir := []v1.Volume{newVolume("data", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}})}
	volumes := newPod("volumes", defaultPriority, []v1.Container{newContainer("c", nil, nil)}, emptyDir)
	logs := newPod("logs", defaultPriority, []v1.Container{newContainer("c", nil, nil)}, emptyDir)
	statsFn := statsOf(map[*v1.Pod]statsapi.PodStats{
		volumes: newPodDiskStats(volumes, q("1Mi"), q("1Mi"), q("30Mi")),
		logs:    newPodDiskStats(logs, q("1Mi"), q("40Mi"), q("0")),
	})
	dedicated := buildSignalToRankFunc(true)
	pods := []*v1.Pod{logs, volumes}
	dedicated[SignalNodeFsAvailable](pods, statsFn)
	expectOrder(t, pods, []*v1.Pod{volumes, logs})
	dedicated[SignalImageFsAvailable](pods, statsFn)
	expectOrder(t, pods, []*v1.Pod{logs, volumes})
	shared := buildSignalToRankFunc(false)
	pods = []*v1.Pod{volumes, logs}
	shared[SignalNodeFsAvailable](pods, statsFn)
	expectOrder(t, pods, []*v1.Pod{logs, volumes})
}
