package checkpoint

import (
	"path/filepath"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

func podFile(uid types.UID) string { return filepath.Join(podsDir, string(uid)+".json") }

// loadPods reads every pod entry; one that fails its checks is refused.
func (s *Store) loadPods() {
	for _, rel := range s.entries(podsDir) {
		var pod v1.Pod
		if _, err := readEntry(filepath.Join(s.dir, rel), &pod); err != nil {
			s.refuse(rel, err)
			continue
		}
		if pod.UID == "" || podFile(pod.UID) != rel {
			s.refuse(rel, errCorrupt)
			continue
		}
		st := pod.Status
		pod.Status = v1.PodStatus{}
		_, sum, _ := encodePod(&pod, &st)
		s.pods[pod.UID] = &podEntry{pod: &pod, status: &st, sum: sum}
	}
	if len(s.pods) > 0 {
		s.log.WithField("pods", len(s.pods)).Info("checkpoint read")
	}
}

// Pods are the checkpoint's pods, each with the last status runlet wrote
// for it, oldest first: the api source's pods when runlet starts offline.
func (s *Store) Pods() []*v1.Pod {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*v1.Pod, 0, len(s.pods))
	for _, e := range s.pods {
		p := e.pod.DeepCopy()
		p.Status = *e.status.DeepCopy()
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreationTimestamp.Equal(&out[j].CreationTimestamp) {
			return out[i].CreationTimestamp.Before(&out[j].CreationTimestamp)
		}
		return out[i].UID < out[j].UID
	})
	return out
}

// SetPods records the api source's pods as the API holds them now: new and
// changed ones are written, and those that left the API are removed with
// what only they referred to. pods are never changed.
func (s *Store) SetPods(pods []*v1.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := make(map[types.UID]bool, len(pods))
	for _, pod := range pods {
		seen[pod.UID] = true
		e, ok := s.pods[pod.UID]
		if ok && e.pod == pod {
			continue
		}
		st := &pod.Status
		if ok {
			st = e.status // runlet's own status outranks the API's copy
		}
		s.putPod(pod, st)
	}
	for uid := range s.pods {
		if !seen[uid] {
			delete(s.pods, uid)
			s.queue(podFile(uid), nil)
			s.wanted, s.gcDue = nil, true
		}
	}
}

// SetStatus records the status runlet writes (or would write, while the
// apiserver is away) for a pod the checkpoint holds; other pods are ignored.
func (s *Store) SetStatus(pod *v1.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.pods[pod.UID]
	if !ok {
		return
	}
	st := pod.Status.DeepCopy()
	s.putPod(e.pod, st)
}

// putPod keeps a pod's entry and queues its file if its content changed.
// Call with s.mu held.
func (s *Store) putPod(pod *v1.Pod, st *v1.PodStatus) {
	content, sum, err := encodePod(pod, st)
	if err != nil {
		s.log.WithError(err).WithField("pod", pod.Namespace+"/"+pod.Name).Warn("pod not checkpointed")
		return
	}
	old, ok := s.pods[pod.UID]
	if !ok || old.pod != pod {
		s.wanted, s.gcDue = nil, true // its references may have changed
	}
	s.pods[pod.UID] = &podEntry{pod: pod, status: st, sum: sum}
	if ok && old.sum == sum {
		return
	}
	s.queue(podFile(pod.UID), content)
}

// encodePod is a pod's entry: the pod with status st, without its managed
// fields (the API's bookkeeping, of no use to run it).
func encodePod(pod *v1.Pod, st *v1.PodStatus) ([]byte, string, error) {
	p := *pod // a shallow copy: only its own fields are set below
	p.ManagedFields = nil
	p.Status = *st
	return encode(&p)
}
