package syncloop

import (
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// podManager holds the desired pods: what the sources currently ask for.
type podManager struct {
	mu   sync.RWMutex
	pods map[types.UID]*v1.Pod
}

func newPodManager() *podManager {
	return &podManager{pods: map[types.UID]*v1.Pod{}}
}

func (m *podManager) set(p *v1.Pod) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pods[p.UID] = p
}

func (m *podManager) remove(uid types.UID) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.pods, uid)
}

func (m *podManager) get(uid types.UID) (*v1.Pod, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	p, ok := m.pods[uid]
	return p, ok
}

func (m *podManager) list() []*v1.Pod {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]*v1.Pod, 0, len(m.pods))
	for _, p := range m.pods {
		out = append(out, p)
	}
	return out
}
