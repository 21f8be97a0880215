// Package results holds the newest result of each container's liveness,
// readiness or startup probe, as the kubelet's prober results manager does.
// The status generator reads readiness and startup from it, the runtime
// manager reads liveness and startup, and the sync loop hears of changes.
package results

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
)

// Result is a probe outcome.
type Result int

// Results, as the kubelet's: Unknown until a probe has run.
const (
	Unknown Result = iota - 1
	Success
	Failure
)

func (r Result) String() string {
	switch r {
	case Success:
		return "Success"
	case Failure:
		return "Failure"
	}
	return "UNKNOWN"
}

// Update is a changed result of one container.
type Update struct {
	ContainerID string
	Result      Result
	PodUID      types.UID
}

// Manager keeps results by container ID (the backend's ID, without the
// runtime prefix).
type Manager struct {
	mu      sync.RWMutex
	cache   map[string]Result
	updates chan Update
}

// NewManager returns an empty manager whose Updates channel is buffered.
func NewManager() *Manager {
	return &Manager{cache: map[string]Result{}, updates: make(chan Update, 20)}
}

// Get returns the container's result and whether there is one.
func (m *Manager) Get(containerID string) (Result, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	r, ok := m.cache[containerID]
	return r, ok
}

// Set records a result; a change is sent on Updates.
func (m *Manager) Set(containerID string, r Result, podUID types.UID) {
	if m.set(containerID, r) {
		m.updates <- Update{ContainerID: containerID, Result: r, PodUID: podUID}
	}
}

func (m *Manager) set(containerID string, r Result) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if prev, ok := m.cache[containerID]; ok && prev == r {
		return false
	}
	m.cache[containerID] = r
	return true
}

// Remove forgets a container.
func (m *Manager) Remove(containerID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.cache, containerID)
}

// Updates delivers changed results.
func (m *Manager) Updates() <-chan Update { return m.updates }
