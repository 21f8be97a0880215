package podman

import (
	"bufio"
	"context"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// conmon marks an OOM kill with an "oom" file in the container's bundle,
// from which podman's inspect reports OOMKilled. On a cgroup v1 host with
// the v2 hierarchy mounted too (hybrid), conmon watches the v2 files, which
// carry no memory controller, and never sees one: a container killed at its
// memory limit looks like any SIGKILL, exit 137. So runlet reads the kill
// counter of the container's own memory cgroup when conmon's exit file
// appears, before podman's clean-up removes the cgroup (v1
// memory.oom_control, v2 memory.events: "oom_kill N"). The kernel counts a
// kill in the victim's cgroup, whichever limit was hit. A kill it sees is
// kept in memory and written to the bundle as conmon would have, so podman
// agrees when it reads the exit later, and a restarted runlet still knows.

// oomRecorder holds, per container, where its cgroup is and whether it saw
// an OOM kill there.
type oomRecorder struct {
	// root is where the memory controller's hierarchy is mounted; empty
	// when the host's cgroups are not visible.
	root string
	v2   bool

	mu      sync.Mutex
	cgroups map[string]string // container ID → cgroup path (as in /proc/<pid>/cgroup)
	killed  map[string]bool
}

func newOOMRecorder(cg cgroupHost) *oomRecorder {
	r := &oomRecorder{v2: cg.v2, cgroups: map[string]string{}, killed: map[string]bool{}}
	root := "/sys/fs/cgroup/memory"
	if cg.v2 {
		root = "/sys/fs/cgroup"
	}
	if st, err := os.Stat(root); err == nil && st.IsDir() {
		r.root = root
	}
	return r
}

// learn records the cgroup of a container (podman's State.CgroupPath).
func (r *oomRecorder) learn(id, cgroupPath string) {
	if r == nil || cgroupPath == "" {
		return
	}
	r.mu.Lock()
	r.cgroups[id] = cgroupPath
	r.mu.Unlock()
}

// learnFromInfra derives a new container's cgroup from its pod's infra
// container: a sibling named after the container's ID with the same
// decoration ("libpod-<id>" under cgroupfs, "libpod-<id>.scope" under systemd).
func (r *oomRecorder) learnFromInfra(id, infraID, infraCgroup string) {
	base := path.Base(infraCgroup)
	if infraID == "" || !strings.Contains(base, infraID) {
		return
	}
	r.learn(id, path.Join(path.Dir(infraCgroup), strings.Replace(base, infraID, id, 1)))
}

// check reads the container's OOM kill count; known is false when its
// cgroup is unknown or already gone.
func (r *oomRecorder) check(id string) (oom, known bool) {
	if r == nil || r.root == "" {
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

// wasKilled reports an OOM kill seen earlier.
func (r *oomRecorder) wasKilled(id string) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.killed[id]
}

// forget drops what is kept of containers not in live.
func (r *oomRecorder) retain(live map[string]bool) {
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

// markOOM writes conmon's "oom" file into the container's bundle, so that
// podman's own state says OOMKilled too; best effort.
func markOOM(bundle string) {
	if bundle == "" {
		return
	}
	p := filepath.Join(bundle, "oom")
	if _, err := os.Stat(p); err == nil {
		return
	}
	if f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
		_ = f.Close()
	}
}

// bundleOOM reports conmon's (or runlet's) "oom" file in a bundle.
func bundleOOM(bundle string) bool {
	if bundle == "" {
		return false
	}
	_, err := os.Stat(filepath.Join(bundle, "oom"))
	return err == nil
}

// bundleDir is a container's bundle (podman's StaticDir): known from an
// inspect, else where containers/storage keeps it for the service's store.
func (b *Backend) bundleDir(id, known string) string {
	if known != "" {
		return known
	}
	root, driver := b.info.Store.GraphRoot, b.info.Store.GraphDriverName
	if root == "" || driver == "" {
		return ""
	}
	return filepath.Join(root, driver+"-containers", id, "userdata")
}

// watchOOMs reads the OOM counter of every container that exits, whether or
// not anyone consumes the backend's events (a broken event stream, or none
// yet): the cgroup is gone moments later. It runs until Close.
func (b *Backend) watchOOMs() {
	if b.ooms == nil || b.ooms.root == "" {
		return
	}
	dir := b.exitsDir(context.Background())
	if dir == "" {
		return
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return
	}
	if err := w.Add(dir); err != nil {
		_ = w.Close()
		return
	}
	b.mu.Lock()
	b.stopOOMs = func() { _ = w.Close() }
	b.mu.Unlock()
	go func() {
		for e := range w.Events {
			id := filepath.Base(e.Name)
			if !e.Has(fsnotify.Create) || !containerIDName.MatchString(id) {
				continue
			}
			if oom, known := b.ooms.check(id); known && oom {
				b.mu.Lock()
				bundle := b.details[id].staticDir
				b.mu.Unlock()
				markOOM(b.bundleDir(id, bundle))
			}
		}
	}()
}
