package syncloop

import (
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/podconfig"
	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// fakeVolumes records tear-downs and which pod directories would go.
type fakeVolumes struct {
	mu        sync.Mutex
	dirs      []string // pods with a directory
	torn      []types.UID
	forgotten []types.UID
	removed   []string
	cleanups  int
}

func (f *fakeVolumes) TearDownPod(uid types.UID) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.torn = append(f.torn, uid)
	return nil
}

func (f *fakeVolumes) ForgetObjects(uid types.UID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forgotten = append(f.forgotten, uid)
}

func (f *fakeVolumes) CleanupPodDirs(keep func(string) bool, release func(string)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cleanups++
	var left []string
	for _, uid := range f.dirs {
		if keep(uid) {
			left = append(left, uid)
		} else {
			release(uid)
			f.removed = append(f.removed, uid)
		}
	}
	f.dirs = left
	return nil
}

// TestPodDirsCleanedOnceGone: housekeeping removes the directories of pods
// no source holds, no worker is busy with and no backend object belongs to,
// and only once every source has been seen and the backend listed.
func TestPodDirsCleanedOnceGone(t *testing.T) {
	vols := &fakeVolumes{dirs: []string{"desired", "in-backend", "worker", "gone"}}
	seen := false
	e := newLoopEnv(t, envOptions{manual: true, syncer: &fakeSyncer{calls: make(chan call, 100)}, sourcesSeen: func() bool { return seen },
		config: func(c *Config) { c.Volumes = vols }})
	ctx, l := e.ctx, e.loop
	if _, err := e.f.CreateSandbox(ctx, runtime.SandboxConfig{PodUID: "in-backend", Namespace: "ns", Name: "b"}); err != nil {
		t.Fatal(err)
	}
	l.pods.set(&v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "desired", Name: "desired", Namespace: "ns"}})
	// A pod being terminated: its worker still runs after the source dropped it.
	l.workers.UpdatePod(&v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "worker", Name: "w", Namespace: "ns"}}, SyncPodKill, nil)

	l.housekeeping(ctx)
	if vols.cleanups != 0 {
		t.Fatal("pod directories were cleaned before every source was seen")
	}
	seen = true
	l.housekeeping(ctx)
	if vols.cleanups != 0 {
		t.Fatalf("pod directories were cleaned before the backend was listed (removed %v)", vols.removed)
	}
	e.pl.Relist(ctx)
	l.housekeeping(ctx)
	sort.Strings(vols.dirs)
	if len(vols.removed) != 1 || vols.removed[0] != "gone" {
		t.Errorf("removed %v, kept %v; want only 'gone' removed", vols.removed, vols.dirs)
	}
	if got := e.f.Released(); len(got) != 1 || got[0] != "gone" {
		t.Errorf("the backend released %v; want only what it kept for 'gone'", got)
	}
}

// TestSyncTerminatedPodTearsDownVolumes: a finished pod's volumes go at
// once (its containers stay for logs), a deleted pod's after its backend
// objects.
func TestSyncTerminatedPodTearsDownVolumes(t *testing.T) {
	vols := &fakeVolumes{}
	e := newLoopEnv(t, envOptions{manual: true, sourcesSeen: func() bool { return true }, config: func(c *Config) { c.Volumes = vols }})
	ctx, l := e.ctx, e.loop
	finished := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "finished", Name: "f", Namespace: "ns"}}
	l.pods.set(finished)
	if err := l.SyncTerminatedPod(ctx, finished, time.Time{}); err != nil {
		t.Fatal(err)
	}
	deleted := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "deleted", Name: "d", Namespace: "ns", DeletionTimestamp: &metav1.Time{Time: time.Now()}}}
	if err := l.SyncTerminatedPod(ctx, deleted, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if len(vols.torn) != 2 || vols.torn[0] != "finished" || vols.torn[1] != "deleted" {
		t.Errorf("torn down %v", vols.torn)
	}
}

// TestRemovedPodForgetsItsObjects: a pod that left the API stops having its
// ConfigMaps and Secrets followed at once, as the kubelet's pod manager
// unregisters them (the Node authorizer no longer lets the node read them),
// while its volumes are torn down only once its containers have stopped.
func TestRemovedPodForgetsItsObjects(t *testing.T) {
	vols := &fakeVolumes{}
	e := newLoopEnv(t, envOptions{manual: true, syncer: &fakeSyncer{calls: make(chan call, 100)}, sourcesSeen: func() bool { return true },
		config: func(c *Config) { c.Volumes = vols }})
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "gone", Name: "g", Namespace: "ns"}}
	e.loop.handleUpdate(podconfig.PodUpdate{Op: podconfig.ADD, Pods: []*v1.Pod{p}, Source: podconfig.APISource})
	if len(vols.forgotten) != 0 {
		t.Fatalf("objects forgotten on ADD: %v", vols.forgotten)
	}
	e.loop.handleUpdate(podconfig.PodUpdate{Op: podconfig.REMOVE, Pods: []*v1.Pod{p}, Source: podconfig.APISource})
	if len(vols.forgotten) != 1 || vols.forgotten[0] != "gone" {
		t.Errorf("forgotten %v, want the removed pod's objects", vols.forgotten)
	}
	if len(vols.torn) != 0 {
		t.Errorf("volumes torn down on REMOVE, before the containers stopped: %v", vols.torn)
	}
}
