package runtime

import (
	"sort"
	"time"
)

// PodStatus is what the backend holds for one pod: the kubelet's
// kubecontainer.PodStatus, assembled by the PLEG from one relist.
type PodStatus struct {
	UID        string
	Sandboxes  []Sandbox   // newest first
	Containers []Container // newest first
	// Timestamp is when the relist that produced this view began.
	Timestamp time.Time
}

// Sandbox returns the newest sandbox, if any.
func (s *PodStatus) Sandbox() *Sandbox {
	if s == nil || len(s.Sandboxes) == 0 {
		return nil
	}
	return &s.Sandboxes[0]
}

// Latest returns the newest container with the given name, and the one
// before it (the "previous" container kept for logs --previous).
func (s *PodStatus) Latest(name string) (cur, prev *Container) {
	if s == nil {
		return nil, nil
	}
	for i := range s.Containers {
		c := &s.Containers[i]
		if c.Name != name {
			continue
		}
		if cur == nil {
			cur = c
		} else if prev == nil {
			prev = c
			break
		}
	}
	return cur, prev
}

// SortNewestFirst orders sandboxes and containers by creation, newest first,
// breaking ties on the attempt number.
func (s *PodStatus) SortNewestFirst() {
	sort.SliceStable(s.Sandboxes, func(i, j int) bool {
		return s.Sandboxes[i].CreatedAt.After(s.Sandboxes[j].CreatedAt)
	})
	sort.SliceStable(s.Containers, func(i, j int) bool {
		a, b := s.Containers[i], s.Containers[j]
		if a.Attempt != b.Attempt {
			return a.Attempt > b.Attempt
		}
		return a.CreatedAt.After(b.CreatedAt)
	})
}
