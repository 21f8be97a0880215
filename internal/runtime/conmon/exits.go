package conmon

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
)

// conmon writes a container's exit code to <exit-dir>/<container ID> about
// 10 ms after the process ends, well before podman's `died` event (150 ms
// or more, once its cleanup process has run). Watching the directory is
// how an exit can reach the pod status in time.

var containerID = regexp.MustCompile(`^[0-9a-f]{64}$`)

// ExitWatcher reports the exit files that appear in an exit directory.
type ExitWatcher struct{ w *fsnotify.Watcher }

// WatchExits starts watching dir; it fails when dir cannot be watched
// (a runtime on another host, or runlet in a container without it).
func WatchExits(dir string) (*ExitWatcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := w.Add(dir); err != nil {
		_ = w.Close()
		return nil, err
	}
	return &ExitWatcher{w: w}, nil
}

// Run calls exited with the container ID and the path of each exit file
// written, until ctx ends, Close is called, or exited returns false. conmon
// writes <id>.XXXXXX and renames it to <id>: only container IDs count. The
// file may belong to a container the caller does not own.
func (x *ExitWatcher) Run(ctx context.Context, exited func(id, path string) bool) {
	for {
		select {
		case <-ctx.Done():
			return
		case _, ok := <-x.w.Errors:
			if !ok {
				return
			}
			// An overflowed queue lost exits; the caller's relist finds them.
		case e, ok := <-x.w.Events:
			if !ok {
				return
			}
			id := filepath.Base(e.Name)
			if !e.Has(fsnotify.Create) || !containerID.MatchString(id) {
				continue
			}
			if !exited(id, e.Name) {
				return
			}
		}
	}
}

// Close ends the watch.
func (x *ExitWatcher) Close() error { return x.w.Close() }

// Exit is what an exit file says.
type Exit struct {
	Code       int
	FinishedAt time.Time
}

// ReadExit reads an exit file as podman does: the code inside, the time of
// the exit from the file's ctime.
func ReadExit(path string) (Exit, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Exit{}, err
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return Exit{}, fmt.Errorf("exit file %s: %w", path, err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return Exit{}, err
	}
	return Exit{Code: code, FinishedAt: time.Unix(st.Ctim.Unix())}, nil
}

// ExitDir is the --exit-dir of the conmon process pid, or "" when its
// command line cannot be read (it runs in another PID namespace) or names
// none.
func ExitDir(pid int) string {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return ""
	}
	return flagValue(bytes.Split(cmdline, []byte{0}), "--exit-dir")
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
