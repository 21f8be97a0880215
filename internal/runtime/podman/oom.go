package podman

import (
	"context"
	"path/filepath"

	"github.com/runlet/runlet/internal/runtime/conmon"
)

// conmon misses OOM kills on hybrid cgroup hosts (see package hostproc), so
// runlet reads the container's cgroup counter when conmon's exit file
// appears, before podman's clean-up removes the cgroup. A kill it sees is
// kept in memory and written to the bundle as conmon would have, so podman
// agrees when it reads the exit later, and a restarted runlet still knows.

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
	if !b.ooms.Available() {
		return
	}
	dir := b.exitsDir(context.Background())
	if dir == "" {
		return
	}
	w, err := conmon.WatchExits(dir)
	if err != nil {
		return
	}
	b.mu.Lock()
	b.stopOOMs = func() { _ = w.Close() }
	b.mu.Unlock()
	go w.Run(context.Background(), func(id, _ string) bool {
		if oom, known := b.ooms.Check(id); known && oom {
			b.mu.Lock()
			bundle := b.details[id].staticDir
			b.mu.Unlock()
			conmon.MarkOOM(b.bundleDir(id, bundle))
		}
		return true
	})
}
