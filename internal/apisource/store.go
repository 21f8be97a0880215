package apisource

import (
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// podStore holds the pods the framework handed over, keyed by UID as the
// kubelet keys them: a pod re-created under the same name (StatefulSets,
// `kubectl replace --force`) is another pod. Guarded by Source.mu.
type podStore struct {
	pods map[types.UID]*v1.Pod
	// forced holds pods that left the API without a graceful delete; each is
	// sent once more as deleted, then dropped.
	forced map[types.UID]bool
	// restored holds the pods taken from the checkpoint while the API did
	// not answer, until the API's own version replaces them.
	restored map[types.UID]bool
}

func newPodStore() podStore {
	return podStore{pods: map[types.UID]*v1.Pod{}, forced: map[types.UID]bool{}, restored: map[types.UID]bool{}}
}

// byName returns the newest pod held under namespace/name, if any.
func (s *podStore) byName(namespace, name string) (*v1.Pod, bool) {
	var newest *v1.Pod
	for _, p := range s.pods {
		if p.Namespace != namespace || p.Name != name {
			continue
		}
		if newest == nil || newest.CreationTimestamp.Before(&p.CreationTimestamp) {
			newest = p
		}
	}
	return newest, newest != nil
}

// others lists the pods held under pod's name with another UID.
func (s *podStore) others(pod *v1.Pod) []*v1.Pod {
	var out []*v1.Pod
	for uid, p := range s.pods {
		if uid != pod.UID && p.Namespace == pod.Namespace && p.Name == pod.Name {
			out = append(out, p)
		}
	}
	return out
}

// forget takes a pod that left the API out of the source. One that left
// without a graceful delete was force-deleted: it is first sent once more as
// deleted with grace 0, so its containers stop at once rather than after the
// spec's grace period, then dropped (REMOVE). One that ran from the
// checkpoint was deleted while runlet could not see how: it is stopped
// with the spec's grace period, as the kubelet stops a pod that left its
// source.
func (s *podStore) forget(cur *v1.Pod) {
	if s.forced[cur.UID] {
		return // already on its way out
	}
	if cur.DeletionTimestamp != nil {
		delete(s.pods, cur.UID)
		delete(s.restored, cur.UID)
		return
	}
	next := cur.DeepCopy()
	now, grace := metav1.NewTime(time.Now()), int64(0)
	if s.restored[cur.UID] {
		grace = v1.DefaultTerminationGracePeriodSeconds
		if g := cur.Spec.TerminationGracePeriodSeconds; g != nil {
			grace = *g
		}
	}
	next.DeletionTimestamp, next.DeletionGracePeriodSeconds = &now, &grace
	s.pods[cur.UID] = next
	s.forced[cur.UID] = true
}

// dropForced removes force-deleted pods once a snapshot carried their
// deletion, so the next snapshot sends the REMOVE; it reports whether any went.
func (s *podStore) dropForced(sent []*v1.Pod) bool {
	dropped := false
	for _, pod := range sent {
		if s.forced[pod.UID] {
			delete(s.forced, pod.UID)
			delete(s.pods, pod.UID)
			delete(s.restored, pod.UID)
			dropped = true
		}
	}
	return dropped
}

func (s *podStore) snapshot() []*v1.Pod {
	out := make([]*v1.Pod, 0, len(s.pods))
	for _, pod := range s.pods {
		out = append(out, pod)
	}
	return out
}
