// Package userns gives pods that ask for a user namespace of their own
// (hostUsers: false) their ID mappings, as the kubelet's user namespace
// manager does: 65536 IDs per pod, in ranges of that size from 65536 up,
// chosen at random, and kept in the pod's directory (file "userns", the
// kubelet's format) so that the pod keeps its range across restarts of its
// sandbox and of runlet. A range is free again once its pod's directory is
// gone.
package userns

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"

	"github.com/runlet/runlet/internal/poddir"
	"github.com/runlet/runlet/internal/runtime"
)

// IDsPerPod is the size of a pod's range: the kubelet's default, and the
// number the upstream tests look for in /proc/self/uid_map.
const IDsPerPod = 65536

// mappingsFile is the pod directory's record of its mappings.
const mappingsFile = "userns"

// Manager allots ranges.
type Manager struct {
	dirs poddir.Dirs
	// first and slots are the node's IDs for pods: slots ranges of
	// IDsPerPod from first.
	first, slots uint32

	mu     sync.Mutex
	usedBy map[string]uint32 // pod UID to its first host ID
	used   map[uint32]string
}

// New returns a Manager that knows the ranges of the pods already on disk.
// A pod whose file is invalid is named in the error, and the Manager
// serves the others; that pod's Mappings fail.
func New(dirs poddir.Dirs, ids HostIDs) (*Manager, error) {
	m := &Manager{dirs: dirs, first: ids.First, slots: ids.Length / IDsPerPod, usedBy: map[string]uint32{}, used: map[uint32]string{}}
	uids, err := dirs.PodUIDs()
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, uid := range uids {
		ns, err := m.read(uid)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err == nil {
			err = m.record(uid, ns)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("user namespace of pod %s: %w", uid, err))
		}
	}
	return m, errors.Join(errs...)
}

// Mappings returns the pod's mappings: those it has, else a free range.
func (m *Manager) Mappings(uid string) (*runtime.UserNamespace, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ns, err := m.read(uid)
	switch {
	case err == nil:
		return ns, m.record(uid, ns)
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("user namespace: %w", err)
	}
	m.releaseGone()
	first, err := m.allocate(uid)
	if err != nil {
		return nil, fmt.Errorf("create user namespace: %w", err)
	}
	one := []runtime.IDMapping{{ContainerID: 0, HostID: first, Length: IDsPerPod}}
	ns = &runtime.UserNamespace{UIDs: one, GIDs: one}
	if err := m.write(uid, ns); err != nil {
		m.release(uid)
		return nil, fmt.Errorf("create user namespace: %w", err)
	}
	return ns, nil
}

// allocate takes a free range at random, as the kubelet's allocator does.
func (m *Manager) allocate(uid string) (uint32, error) {
	n := int(m.slots)
	if len(m.used) >= n {
		return 0, errors.New("could not find an empty slot to allocate a user namespace")
	}
	start := rand.IntN(n)
	for i := range n {
		first := m.first + uint32((start+i)%n)*IDsPerPod
		if _, taken := m.used[first]; !taken {
			m.used[first], m.usedBy[uid] = uid, first
			return first, nil
		}
	}
	return 0, errors.New("could not find an empty slot to allocate a user namespace")
}

// record takes the range a pod's file names, which must be one the
// manager would have given.
func (m *Manager) record(uid string, ns *runtime.UserNamespace) error {
	if len(ns.UIDs) != 1 || len(ns.GIDs) != 1 || ns.UIDs[0] != ns.GIDs[0] {
		return errors.New("invalid user namespace configuration: one mapping, the same for users and groups")
	}
	e := ns.UIDs[0]
	if e.ContainerID != 0 || e.Length != IDsPerPod || e.HostID%IDsPerPod != 0 || e.HostID == 0 {
		return fmt.Errorf("invalid user namespace configuration: %d IDs from %d for %d", e.Length, e.HostID, e.ContainerID)
	}
	if e.HostID < m.first || (e.HostID-m.first)/IDsPerPod >= m.slots {
		return fmt.Errorf("id %d is out of range", e.HostID)
	}
	if prev, ok := m.usedBy[uid]; ok && prev != e.HostID {
		return fmt.Errorf("different user namespace range already used by pod %q", uid)
	}
	if owner, ok := m.used[e.HostID]; ok && owner != uid {
		return fmt.Errorf("range picked for pod %q already taken", uid)
	}
	m.used[e.HostID], m.usedBy[uid] = uid, e.HostID
	return nil
}

// releaseGone frees the ranges of pods whose directory is gone.
func (m *Manager) releaseGone() {
	for uid := range m.usedBy {
		if _, err := os.Stat(m.dirs.Pod(uid)); errors.Is(err, os.ErrNotExist) {
			m.release(uid)
		}
	}
}

func (m *Manager) release(uid string) {
	delete(m.used, m.usedBy[uid])
	delete(m.usedBy, uid)
}

func (m *Manager) file(uid string) string { return filepath.Join(m.dirs.Pod(uid), mappingsFile) }

func (m *Manager) read(uid string) (*runtime.UserNamespace, error) {
	b, err := os.ReadFile(m.file(uid))
	if err != nil {
		return nil, err
	}
	var ns runtime.UserNamespace
	if err := json.Unmarshal(b, &ns); err != nil {
		return nil, fmt.Errorf("invalid user namespace mappings file: %w", err)
	}
	return &ns, nil
}

// write records the mappings durably before any process uses them.
func (m *Manager) write(uid string, ns *runtime.UserNamespace) error {
	dir := m.dirs.Pod(uid)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	b, err := json.Marshal(ns)
	if err != nil {
		return err
	}
	tmp := m.file(uid) + ".tmp"
	if err := writeSynced(tmp, b); err != nil {
		return err
	}
	if err := os.Rename(tmp, m.file(uid)); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func writeSynced(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
