package hostproc

import (
	"bufio"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// conmon, which marks OOM kills for the runtime, misses them on a cgroup v1
// host with the v2 hierarchy mounted too (hybrid): it watches the v2 files,
// which carry no memory controller, so a container killed at its memory
// limit looks like any SIGKILL, exit 137. The kill counter of the
// container's own memory cgroup (v1 memory.oom_control, v2 memory.events:
// "oom_kill N") does count it, in the victim's cgroup whichever limit was
// hit, until the runtime's clean-up removes the cgroup: it is read when the
// exit is seen.

// OOMRecorder holds, per container, where its cgroup is and whether an OOM
// kill was seen there, kept once seen so that a listing after the cgroup is
// gone still says so. A nil recorder knows nothing.
type OOMRecorder struct {
	// root is where the memory controller's hierarchy is mounted; empty
	// when the host's cgroups are not visible.
	root string
	v2   bool

	mu      sync.Mutex
	cgroups map[string]string // container ID → cgroup path (as in /proc/<pid>/cgroup)
	killed  map[string]bool
}

// NewOOMRecorder reads the memory cgroups below mount, where the host's
// cgroup hierarchies are ("/sys/fs/cgroup"), of the v1 or v2 layout.
func NewOOMRecorder(mount string, v2 bool) *OOMRecorder {
	r := &OOMRecorder{v2: v2, cgroups: map[string]string{}, killed: map[string]bool{}}
	root := filepath.Join(mount, "memory")
	if v2 {
		root = mount
	}
	if st, err := os.Stat(root); err == nil && st.IsDir() {
		r.root = root
	}
	return r
}

// Available reports whether the host's memory cgroups are in reach.
func (r *OOMRecorder) Available() bool { return r != nil && r.root != "" }

// Learn records the cgroup of a container, below the hierarchy's root.
func (r *OOMRecorder) Learn(id, cgroupPath string) {
	if r == nil || cgroupPath == "" {
		return
	}
	r.mu.Lock()
	r.cgroups[id] = cgroupPath
	r.mu.Unlock()
}

// LearnSibling derives a new container's cgroup from a sibling's, that of
// its pod's infra container: named after the container's ID with the same
// decoration ("libpod-<id>" under cgroupfs, "libpod-<id>.scope" under
// systemd).
func (r *OOMRecorder) LearnSibling(id, siblingID, siblingCgroup string) {
	base := path.Base(siblingCgroup)
	if siblingID == "" || !strings.Contains(base, siblingID) {
		return
	}
	r.Learn(id, path.Join(path.Dir(siblingCgroup), strings.Replace(base, siblingID, id, 1)))
}

// Cgroup is the cgroup recorded for a container, "" if none.
func (r *OOMRecorder) Cgroup(id string) string {
	if r == nil {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.cgroups[id]
}

// Check reads the container's OOM kill count; known is false when its
// cgroup is unknown or already gone.
func (r *OOMRecorder) Check(id string) (oom, known bool) {
	if !r.Available() {
		return false, false
	}
	r.mu.Lock()
	cg, ok := r.cgroups[id]
	killed := r.killed[id]
	r.mu.Unlock()
	if killed {
		return true, true
	}
	if !ok {
		return false, false
	}
	file := "memory.oom_control"
	if r.v2 {
		file = "memory.events"
	}
	n, err := oomKillCount(filepath.Join(r.root, cg, file))
	if err != nil {
		return false, false
	}
	if n > 0 {
		r.mu.Lock()
		r.killed[id] = true
		r.mu.Unlock()
	}
	return n > 0, true
}

// WasKilled reports an OOM kill seen earlier.
func (r *OOMRecorder) WasKilled(id string) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.killed[id]
}

// Retain drops what is kept of containers not in live.
func (r *OOMRecorder) Retain(live map[string]bool) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for id := range r.cgroups {
		if !live[id] {
			delete(r.cgroups, id)
		}
	}
	for id := range r.killed {
		if !live[id] {
			delete(r.killed, id)
		}
	}
}

// oomKillCount reads the "oom_kill N" line of memory.oom_control (v1) or
// memory.events (v2).
func oomKillCount(file string) (int64, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), "oom_kill "); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, s.Err()
}
