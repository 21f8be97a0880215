package podman

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/conmon"
)

// Until podman's `died` event, some 150 ms after an exit, the container's
// lock is held, so even listing it waits; conmon's exit file comes within
// 10 ms. podman reads its exit state from this very file (code inside, time
// from its ctime, OOM from an "oom" file in the container's bundle), so the
// hint carries it; the file may belong to a container runlet does not own,
// which the core ignores.

// watchExits sends an event for every exit file written until ctx ends. It
// returns false when no exit directory can be watched (podman on another
// host, or runlet in a container without it); events alone then serve.
func (b *Backend) watchExits(ctx context.Context, ch chan<- runtime.Event) (func(), bool) {
	if b.remote {
		return nil, false // this host's exit directory belongs to another podman
	}
	dir := b.exitsDir(ctx)
	if dir == "" {
		return nil, false
	}
	w, err := conmon.WatchExits(dir)
	if err != nil {
		b.opts.Logf("not watching podman's exit files in %s (%v); container exits are seen through podman's events", dir, err)
		return nil, false
	}
	return func() {
		defer w.Close()
		w.Run(ctx, func(id, path string) bool {
			ev := runtime.Event{ContainerID: id, Action: "exited", Time: time.Now(), Exit: b.readExit(path, id)}
			select {
			case ch <- ev:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}, true
}

// readExit reads an exit file as podman would; nil when it is gone already
// or when an exit by SIGKILL cannot be told apart from an OOM kill.
func (b *Backend) readExit(path, id string) *runtime.ContainerExit {
	e, err := conmon.ReadExit(path)
	if err != nil {
		return nil
	}
	x := &runtime.ContainerExit{ExitCode: e.Code, FinishedAt: e.FinishedAt}
	b.mu.Lock()
	bundle := b.details[id].staticDir
	b.mu.Unlock()
	if oom, known := b.ooms.Check(id); known {
		// The cgroup still exists and says (see oom.go).
		if x.OOMKilled = oom; oom {
			conmon.MarkOOM(b.bundleDir(id, bundle))
		}
		return x
	}
	if bundle == "" {
		if e.Code == 137 {
			return nil
		}
		return x
	}
	x.OOMKilled = conmon.OOMMarked(bundle)
	return x
}

// exitsDir is the configured directory, else the --exit-dir of a running
// container's conmon, else the directory podman uses by default.
func (b *Backend) exitsDir(ctx context.Context) string {
	if b.opts.ExitDir != "" {
		return b.opts.ExitDir
	}
	if dir := b.exitsDirFromConmon(ctx); dir != "" {
		return dir
	}
	if os.Geteuid() == 0 {
		return "/run/libpod/exits"
	}
	if dir := os.Getenv("XDG_RUNTIME_DIR"); dir != "" {
		return filepath.Join(dir, "libpod", "tmp", "exits")
	}
	return ""
}

// exitsDirFromConmon asks the conmon of the first running container that
// has one; a conmon in another PID namespace says nothing.
func (b *Backend) exitsDirFromConmon(ctx context.Context) string {
	list, err := b.client.ListContainers(ctx, b.managedFilter())
	if err != nil {
		return ""
	}
	for _, lc := range list {
		if lc.State != "running" {
			continue
		}
		in, err := b.client.InspectContainer(ctx, lc.ID)
		if err != nil || in.State.ConmonPid == 0 {
			continue
		}
		return conmon.ExitDir(in.State.ConmonPid)
	}
	return ""
}
