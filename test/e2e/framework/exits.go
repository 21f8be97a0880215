package framework

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime/conmon"
	"k8s.io/apimachinery/pkg/types"
)

// ExitRecorder collects the exit codes the backend records for a pod's
// containers from the moment it was made: podman's died events, or the
// exit files conmon writes for the runc backend, read as they appear
// (runlet removes a deleted pod's containers, and their records, moments
// later).
type ExitRecorder struct {
	t     testing.TB
	uid   types.UID
	since time.Time

	mu    sync.Mutex
	codes map[string]int // container name → exit code (runc)
}

// RecordExits starts recording; it ends with the test.
func RecordExits(t testing.TB, uid types.UID) *ExitRecorder {
	t.Helper()
	r := &ExitRecorder{t: t, uid: uid, since: time.Now(), codes: map[string]int{}}
	names := map[string]string{} // container ID → name
	for _, c := range Containers(t, uid) {
		names[c.ID] = c.Name()
	}
	for _, root := range runcRoots() {
		w, err := conmon.WatchExits(filepath.Join(root, "exits"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.Close() })
		go w.Run(context.Background(), func(id, path string) bool {
			if name, ok := names[id]; ok {
				if exit, err := conmon.ReadExit(path); err == nil {
					r.mu.Lock()
					r.codes[name] = exit.Code
					r.mu.Unlock()
				}
			}
			return true
		})
	}
	return r
}

// Code is the exit code of the pod's container name, waiting up to 20 s
// for it (podman writes its events log asynchronously); -1 if none came.
func (r *ExitRecorder) Code(name string) int {
	r.t.Helper()
	code := -1
	Eventually(r.t, 20*time.Second, "the exit of "+name, func() (bool, error) {
		r.mu.Lock()
		c, ok := r.codes[name]
		r.mu.Unlock()
		if ok {
			code = c
			return true, nil
		}
		if !podmanInUse() {
			return false, nil
		}
		code, ok = r.podmanDied(name)
		return ok, nil
	})
	return code
}

// podmanDied reads podman's died event of the container name since the
// recorder started.
func (r *ExitRecorder) podmanDied(name string) (int, bool) {
	out, err := PodmanCLIE("events", "--stream=false", "--since", r.since.Format(time.RFC3339Nano),
		"--filter", "event=died", "--filter", "label="+LabelPodUID+"="+string(r.uid), "--format", "json")
	if err != nil {
		return -1, false
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var e struct {
			ContainerExitCode int               `json:"ContainerExitCode"`
			Attributes        map[string]string `json:"Attributes"`
		}
		if json.Unmarshal([]byte(line), &e) == nil && e.Attributes[LabelContainerName] == name {
			return e.ContainerExitCode, true
		}
	}
	return -1, false
}
