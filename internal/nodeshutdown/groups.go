package nodeshutdown

import (
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// The kubelet's scheduling priorities: a pod without one, and the lowest
// of the system-critical classes.
const (
	defaultPriority        = 0
	systemCriticalPriority = 2 * 1000000000
)

// ByPodPriority is one priority group's share of the shutdown: pods of at
// least Priority (and below the next group's) get ShutdownGracePeriodSeconds.
type ByPodPriority = kubeletv1beta1.ShutdownGracePeriodByPodPriority

// Periods are the groups the configuration makes, lowest priority first,
// as the kubelet's newPodManager: byPriority when given, else
// shutdownGracePeriod split into regular pods' and critical pods' shares.
// None: graceful node shutdown is off.
func Periods(gracePeriod, criticalPods time.Duration, byPriority []ByPodPriority) []ByPodPriority {
	out := append([]ByPodPriority(nil), byPriority...)
	if len(out) == 0 {
		out = migrate(gracePeriod, criticalPods)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Priority < out[j].Priority })
	return out
}

// migrate is the kubelet's migrateConfig: the two durations as two groups.
func migrate(gracePeriod, criticalPods time.Duration) []ByPodPriority {
	regular := gracePeriod - criticalPods
	if gracePeriod == 0 || regular < 0 {
		return nil
	}
	return []ByPodPriority{
		{Priority: defaultPriority, ShutdownGracePeriodSeconds: int64(regular / time.Second)},
		{Priority: systemCriticalPriority, ShutdownGracePeriodSeconds: int64(criticalPods / time.Second)},
	}
}

// total is the whole shutdown's length, what logind is asked to wait.
func total(periods []ByPodPriority) time.Duration {
	var sum int64
	for _, p := range periods {
		sum += p.ShutdownGracePeriodSeconds
	}
	return time.Duration(sum) * time.Second
}

// group is one priority group and its pods.
type group struct {
	ByPodPriority
	pods []*v1.Pod
}

// groupByPriority puts each pod in the group of the highest priority not
// above its own (of equal ones, the first); a pod below every group goes to
// the lowest, as the kubelet's groupByPriority.
func groupByPriority(periods []ByPodPriority, pods []*v1.Pod) []group {
	groups := make([]group, len(periods))
	for i, p := range periods {
		groups[i].ByPodPriority = p
	}
	for _, pod := range pods {
		var priority int32
		if pod.Spec.Priority != nil {
			priority = *pod.Spec.Priority
		}
		i := sort.Search(len(groups), func(i int) bool { return groups[i].Priority >= priority })
		switch {
		case i == len(groups):
			i--
		case i > 0 && groups[i].Priority > priority:
			i--
		}
		groups[i].pods = append(groups[i].pods, pod)
	}
	return groups
}
