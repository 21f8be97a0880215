// Package allocation holds, per pod and container, the resources the node
// granted (allocated) and those it applied to the running container
// (actuated), as the kubelet's allocation manager and actuated-resources
// checkpoint do. An in-place resize changes the pod's spec at once; the
// node adopts it into the allocation only when it fits, and the pod's sync
// then brings each running container to its allocation. Both records are
// kept in one checkpoint under --root-dir, so a resize survives a restart
// of runlet midway.
package allocation

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
)

// CheckpointFile is the checkpoint's name under --root-dir.
const CheckpointFile = "allocated_pods_state"

// PodLevel is the name the pod's own resources (spec.resources) are kept
// under, beside its containers': a container's name is a DNS label, never
// empty.
const PodLevel = ""

// byContainer are resources by container name, and the pod's own under
// PodLevel when it sets any.
type byContainer map[string]v1.ResourceRequirements

type checkpoint struct {
	Allocated map[types.UID]byContainer `json:"allocated"`
	Actuated  map[types.UID]byContainer `json:"actuated"`
}

// Manager keeps the records and the pods' resize conditions.
type Manager struct {
	mu     sync.Mutex
	path   string
	st     checkpoint
	resize map[types.UID]*conditions
}

// New loads the checkpoint at dir/CheckpointFile (none: empty). A checkpoint
// that cannot be read is set aside and the manager starts empty, with an
// error saying so: the pods' specs then serve as their allocation.
func New(dir string) (*Manager, error) {
	m := &Manager{path: filepath.Join(dir, CheckpointFile), resize: map[types.UID]*conditions{}}
	m.st = checkpoint{Allocated: map[types.UID]byContainer{}, Actuated: map[types.UID]byContainer{}}
	b, err := os.ReadFile(m.path)
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err == nil {
		var st checkpoint
		if err = json.Unmarshal(b, &st); err == nil {
			if st.Allocated != nil {
				m.st.Allocated = st.Allocated
			}
			if st.Actuated != nil {
				m.st.Actuated = st.Actuated
			}
			return m, nil
		}
	}
	_ = os.Rename(m.path, m.path+".bad")
	return m, fmt.Errorf("resource allocation checkpoint %s unreadable (set aside as .bad), starting from the pods' specs: %w", m.path, err)
}

// Admit records a pod's spec as its allocation unless it has one (a pod
// known before a restart keeps what the node granted it). A checkpoint
// written before pod-level resources were kept gains the pod's: no node
// resized them then.
func (m *Manager) Admit(pod *v1.Pod) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if alloc, ok := m.st.Allocated[pod.UID]; ok {
		if _, has := alloc[PodLevel]; has || pod.Spec.Resources == nil {
			return nil
		}
		alloc[PodLevel] = *pod.Spec.Resources.DeepCopy()
		return m.saveLocked()
	}
	m.st.Allocated[pod.UID] = specResources(pod)
	return m.saveLocked()
}

// SetAllocated records the pod's spec as its allocation: a resize accepted.
func (m *Manager) SetAllocated(pod *v1.Pod) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	// What each container without a record of its own was given is the old
	// allocation: recorded now, before the allocation moves.
	old := m.st.Allocated[pod.UID]
	for name, r := range old {
		if _, ok := m.st.Actuated[pod.UID][name]; !ok {
			m.actuated(pod.UID)[name] = r
		}
	}
	next := specResources(pod)
	// Pod-level resources a resize adds were applied as none: the pod's
	// cgroup holds its containers' sum until the resize moves it.
	if _, had := old[PodLevel]; old != nil && !had {
		if _, adds := next[PodLevel]; adds {
			m.actuated(pod.UID)[PodLevel] = v1.ResourceRequirements{}
		}
	}
	m.st.Allocated[pod.UID] = next
	return m.saveLocked()
}

// Has reports whether the pod has an allocation.
func (m *Manager) Has(uid types.UID) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.st.Allocated[uid]
	return ok
}

// Allocated is the pod with its own and its containers' resources as
// allocated: the pod itself when they are what its spec says (or it has no
// allocation), else a copy.
func (m *Manager) Allocated(pod *v1.Pod) *v1.Pod {
	m.mu.Lock()
	alloc, ok := m.st.Allocated[pod.UID]
	m.mu.Unlock()
	if !ok || !differs(alloc, pod) {
		return pod
	}
	out := pod.DeepCopy()
	out.Spec.Resources = nil
	if r, ok := alloc[PodLevel]; ok {
		out.Spec.Resources = r.DeepCopy()
	}
	for _, list := range [][]v1.Container{out.Spec.InitContainers, out.Spec.Containers} {
		for i := range list {
			if r, ok := alloc[list[i].Name]; ok {
				list[i].Resources = *r.DeepCopy()
			}
		}
	}
	return out
}

// ResizeRequested reports whether the pod's spec asks for other resources
// than it was allocated.
func (m *Manager) ResizeRequested(pod *v1.Pod) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	alloc, ok := m.st.Allocated[pod.UID]
	return ok && differs(alloc, pod)
}

// differs reports whether the pod's spec asks for other resources than
// alloc, for the pod and container by container (it runs on every status
// the pod gets).
func differs(alloc byContainer, pod *v1.Pod) bool {
	n := 0
	if pod.Spec.Resources != nil {
		r, ok := alloc[PodLevel]
		if !ok || !apiequality.Semantic.DeepEqual(r, *pod.Spec.Resources) {
			return true
		}
		n++
	}
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			r, ok := alloc[list[i].Name]
			if !ok || !apiequality.Semantic.DeepEqual(r, list[i].Resources) {
				return true
			}
			n++
		}
	}
	return n != len(alloc)
}

// Actuated is what was last applied to the pod's container (PodLevel: to
// the pod's cgroup). Only what
// differs from the allocation is recorded (a resize not yet applied); else
// the container has its allocation. ok is false for a container without
// either.
func (m *Manager) Actuated(uid types.UID, name string) (v1.ResourceRequirements, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.st.Actuated[uid][name]; ok {
		return r, true
	}
	r, ok := m.st.Allocated[uid][name]
	return r, ok
}

// SetActuated records what was applied to the pod's container. A container
// given its allocation, as every container at its creation, costs no write.
func (m *Manager) SetActuated(uid types.UID, name string, r v1.ResourceRequirements) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, recorded := m.st.Actuated[uid][name]
	switch {
	case recorded && apiequality.Semantic.DeepEqual(cur, r):
		return nil
	case apiequality.Semantic.DeepEqual(m.st.Allocated[uid][name], r):
		if !recorded {
			return nil
		}
		delete(m.st.Actuated[uid], name)
		if len(m.st.Actuated[uid]) == 0 {
			delete(m.st.Actuated, uid)
		}
	default:
		m.actuated(uid)[name] = *r.DeepCopy()
	}
	return m.saveLocked()
}

func (m *Manager) actuated(uid types.UID) byContainer {
	if m.st.Actuated[uid] == nil {
		m.st.Actuated[uid] = byContainer{}
	}
	return m.st.Actuated[uid]
}

// Remove forgets a pod that is gone.
func (m *Manager) Remove(uid types.UID) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.resize, uid)
	_, a := m.st.Allocated[uid]
	_, b := m.st.Actuated[uid]
	if !a && !b {
		return nil
	}
	delete(m.st.Allocated, uid)
	delete(m.st.Actuated, uid)
	return m.saveLocked()
}

// RemoveOrphans forgets every pod keep does not name.
func (m *Manager) RemoveOrphans(keep func(types.UID) bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	changed := false
	for _, recs := range []map[types.UID]byContainer{m.st.Allocated, m.st.Actuated} {
		for uid := range recs {
			if !keep(uid) {
				delete(recs, uid)
				delete(m.resize, uid)
				changed = true
			}
		}
	}
	if !changed {
		return nil
	}
	return m.saveLocked()
}

func (m *Manager) saveLocked() error {
	b, err := json.Marshal(m.st)
	if err != nil {
		return err
	}
	tmp := m.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("writing the resource allocation checkpoint: %w", err)
	}
	return os.Rename(tmp, m.path)
}

// specResources are the resources the pod's spec asks for, by container
// and for the pod.
func specResources(pod *v1.Pod) byContainer {
	out := byContainer{}
	if pod.Spec.Resources != nil {
		out[PodLevel] = *pod.Spec.Resources.DeepCopy()
	}
	for _, list := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range list {
			out[list[i].Name] = *list[i].Resources.DeepCopy()
		}
	}
	return out
}
