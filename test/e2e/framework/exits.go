package framework

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime/conmon"
	"k8s.io/apimachinery/pkg/types"
)

// ExitRecorder collects the exits the backend records for a pod's
// containers from the moment it was made: the exit files conmon writes, for
// podman and the runc backend alike, read as they appear (runlet removes a
// deleted pod's containers, and their records, moments later). podman's
// died events stand in where its exit directory cannot be found.
type ExitRecorder struct {
	t     testing.TB
	uid   types.UID
	since time.Time

	mu    sync.Mutex
	exits map[string]exit // container name → its exit
}

type exit struct {
	code int
	at   time.Time
}

// RecordExits starts recording; it ends with the test.
func RecordExits(t testing.TB, uid types.UID) *ExitRecorder {
	t.Helper()
	r := &ExitRecorder{t: t, uid: uid, since: time.Now(), exits: map[string]exit{}}
	names := map[string]string{} // container ID → name
	for _, c := range Containers(t, uid) {
		names[c.ID] = c.Name()
	}
	for _, dir := range exitDirs(t, uid) {
		w, err := conmon.WatchExits(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.Close() })
		go w.Run(context.Background(), func(id, path string) bool {
			if name, ok := names[id]; ok {
				if e, err := conmon.ReadExit(path); err == nil {
					r.mu.Lock()
					r.exits[name] = exit{code: e.Code, at: e.FinishedAt}
					r.mu.Unlock()
				}
			}
			return true
		})
	}
	return r
}

// exitDirs are the directories conmon writes the pod's containers' exits
// to: each runc backend's, and podman's, read from its conmons' command
// lines.
func exitDirs(t testing.TB, uid types.UID) []string {
	roots := runcRoots()
	seen := map[string]bool{}
	var dirs []string
	add := func(d string) {
		if d != "" && !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	for _, root := range roots {
		add(filepath.Join(root, "exits"))
	}
	for _, c := range Containers(t, uid) {
		if runcRoot(roots, c.ID) == "" && c.Running {
			add(conmon.ExitDir(InspectContainer(t, c.ID).State.ConmonPid))
		}
	}
	return dirs
}

// Code is the exit code of the pod's container name, waiting up to 20 s
// for it (podman writes its events log asynchronously); the test fails if
// none comes.
func (r *ExitRecorder) Code(name string) int {
	r.t.Helper()
	return r.wait(name).code
}

// Order gives names in the order their containers exited (the backend's
// times are to the nanosecond), each waited for as Code waits.
func (r *ExitRecorder) Order(names ...string) []string {
	r.t.Helper()
	at := map[string]time.Time{}
	for _, n := range names {
		at[n] = r.wait(n).at
	}
	out := slices.Clone(names)
	sort.SliceStable(out, func(i, j int) bool { return at[out[i]].Before(at[out[j]]) })
	return out
}

func (r *ExitRecorder) wait(name string) exit {
	r.t.Helper()
	var got exit
	Eventually(r.t, 20*time.Second, "the exit of "+name, func() (bool, error) {
		r.mu.Lock()
		e, ok := r.exits[name]
		r.mu.Unlock()
		if ok || !podmanInUse() {
			got = e
			return ok, nil
		}
		// podman's events log is written asynchronously: only a stand-in.
		got, ok = r.podmanDied(name)
		return ok, nil
	})
	return got
}

// podmanDied reads podman's died event of the container name since the
// recorder started.
func (r *ExitRecorder) podmanDied(name string) (exit, bool) {
	out, err := PodmanCLIE("events", "--stream=false", "--since", r.since.Format(time.RFC3339Nano),
		"--filter", "event=died", "--filter", "label="+LabelPodUID+"="+string(r.uid), "--format", "json")
	if err != nil {
		return exit{}, false
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e struct {
			Time              time.Time         `json:"Time"`
			ContainerExitCode int               `json:"ContainerExitCode"`
			Attributes        map[string]string `json:"Attributes"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Attributes[LabelContainerName] == name {
			return exit{code: e.ContainerExitCode, at: e.Time}, true
		}
	}
	return exit{}, false
}
