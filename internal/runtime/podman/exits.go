package podman

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/runlet/runlet/internal/runtime"
)

// conmon writes a container's exit code to <exit-dir>/<container ID> about
// 10 ms after the process ends; podman's `died` event only follows once its
// cleanup process has run, 150 ms or more later, and until then the
// container's lock is held, so even listing it waits. Watching the directory
// is how a container's exit reaches the pod status in time. podman reads its
// exit state from this very file (code inside, time from its ctime, OOM from
// an "oom" file in the container's bundle), so the hint carries it; the file
// may belong to a container runlet does not own, which the core ignores.

var containerIDName = regexp.MustCompile(`^[0-9a-f]{64}$`)

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
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, false
	}
	if err := w.Add(dir); err != nil {
		b.opts.Logf("not watching podman's exit files in %s (%v); container exits are seen through podman's events", dir, err)
		_ = w.Close()
		return nil, false
	}
	return func() {
		defer w.Close()
		b.pumpExits(ctx, w, ch)
	}, true
}

func (b *Backend) pumpExits(ctx context.Context, w *fsnotify.Watcher, ch chan<- runtime.Event) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.Errors:
			// An overflowed queue lost exits; the periodic relist finds them.
		case e, ok := <-w.Events:
			if !ok {
				return
			}
			id := filepath.Base(e.Name)
			if !e.Has(fsnotify.Create) || !containerIDName.MatchString(id) {
				continue
			}
			ev := runtime.Event{ContainerID: id, Action: "exited", Time: time.Now(), Exit: b.readExit(e.Name, id)}
			select {
			case ch <- ev:
			case <-ctx.Done():
				return
			}
		}
	}
}

// readExit reads an exit file as podman would; nil when it is gone already
// or when an exit by SIGKILL cannot be told apart from an OOM kill.
func (b *Backend) readExit(path, id string) *runtime.ContainerExit {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return nil
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return nil
	}
	x := &runtime.ContainerExit{ExitCode: code, FinishedAt: time.Unix(st.Ctim.Unix())}
	b.mu.Lock()
	bundle := b.details[id].staticDir
	b.mu.Unlock()
	if oom, known := b.ooms.check(id); known {
		// The cgroup still exists and says (see oom.go).
		if x.OOMKilled = oom; oom {
			markOOM(b.bundleDir(id, bundle))
		}
		return x
	}
	if bundle == "" {
		if code == 137 {
			return nil
		}
		return x
	}
	_, err = os.Stat(filepath.Join(bundle, "oom"))
	x.OOMKilled = err == nil
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
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", in.State.ConmonPid))
		if err != nil {
			return "" // conmon lives in another PID namespace
		}
		return flagValue(bytes.Split(cmdline, []byte{0}), "--exit-dir")
	}
	return ""
}

// flagValue finds "--name value" or "--name=value" in argv.
func flagValue(argv [][]byte, name string) string {
	for i, a := range argv {
		s := string(a)
		if s == name && i+1 < len(argv) {
			return string(argv[i+1])
		}
		if v, ok := bytes.CutPrefix(a, []byte(name+"=")); ok {
			return string(v)
		}
	}
	return ""
}
