package apisource

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/podconfig"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// lateInformer is the node's pod informer while the apiserver does not
// answer: it has listed nothing until list is called.
type lateInformer struct {
	informer
	synced atomic.Bool
}

func (i *lateInformer) Synced() bool { return i.synced.Load() }

// list is the API answering with pods.
func (i *lateInformer) list(t *testing.T, pods ...*v1.Pod) {
	for _, p := range pods {
		if err := i.idx.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	i.synced.Store(true)
}

// fakeCheckpoint holds pods as internal/checkpoint would.
type fakeCheckpoint struct {
	mu      sync.Mutex
	pods    []*v1.Pod
	kept    map[types.UID]bool
	offline bool
}

func (c *fakeCheckpoint) Pods() []*v1.Pod {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*v1.Pod, 0, len(c.pods))
	for _, p := range c.pods {
		out = append(out, p.DeepCopy())
	}
	return out
}

func (c *fakeCheckpoint) SetPods(pods []*v1.Pod) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kept = map[types.UID]bool{}
	for _, p := range pods {
		c.kept[p.UID] = true
	}
}

func (c *fakeCheckpoint) SetOffline(off bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offline = off
}

func (c *fakeCheckpoint) state() (bool, map[types.UID]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offline, c.kept
}

// offlineFixture is an api source with a checkpoint, feeding a real
// podconfig mux, whose updates the test reads.
type offlineFixture struct {
	api     *lateInformer
	cp      *fakeCheckpoint
	s       *Source
	updates <-chan podconfig.PodUpdate
	online  atomic.Int32
}

func newOfflineFixture(t *testing.T, offlineAt time.Time, checkpointed ...*v1.Pod) *offlineFixture {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	f := &offlineFixture{api: &lateInformer{informer: informer{idx: idx}}, cp: &fakeCheckpoint{pods: checkpointed}}
	mux := podconfig.New(ctx, nil)
	s, err := New(Config{Updates: mux.Channel(podconfig.APISource), Pods: f.api, Checkpoint: f.cp,
		OfflineAt: offlineAt, Online: func() { f.online.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	f.s, f.updates = s, mux.Updates()
	go s.Run(ctx)
	return f
}

// next returns the next update of op, skipping others; it fails the test
// after a while.
func (f *offlineFixture) next(t *testing.T, op podconfig.Op) podconfig.PodUpdate {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case u := <-f.updates:
			if u.Op == op {
				return u
			}
		case <-deadline:
			t.Fatalf("no %s update", op)
		}
	}
}

func names(u podconfig.PodUpdate) map[string]*v1.Pod {
	out := map[string]*v1.Pod{}
	for _, p := range u.Pods {
		out[p.Name] = p
	}
	return out
}

// TestOfflineStartRunsCheckpoint: with no answer from the API by OfflineAt,
// the checkpoint's pods are the api source's, with their statuses, and the
// checkpoint serves objects offline.
func TestOfflineStartRunsCheckpoint(t *testing.T) {
	a := ppod("a", "ua")
	a.Status = v1.PodStatus{Phase: v1.PodRunning, ContainerStatuses: []v1.ContainerStatus{{Name: "c", RestartCount: 4}}}
	f := newOfflineFixture(t, time.Now(), a, ppod("b", "ub"))
	got := names(f.next(t, podconfig.ADD))
	if len(got) != 2 || got["a"] == nil || got["b"] == nil {
		t.Fatalf("ADD = %v; want the checkpoint's a and b", got)
	}
	if cs := got["a"].Status.ContainerStatuses; len(cs) != 1 || cs[0].RestartCount != 4 {
		t.Errorf("a's status = %+v; want the checkpoint's (4 restarts)", got["a"].Status)
	}
	if off, _ := f.cp.state(); !off {
		t.Error("the checkpoint was not told the pods run from it")
	}
	if p, ok := f.s.Get("ns", "a"); !ok || p.UID != "ua" {
		t.Errorf("Get(a) offline = %v, %v; want the checkpoint's pod", p, ok)
	}
	if f.online.Load() != 0 {
		t.Error("Online called before the API answered")
	}
}

// TestReconnectAPIWins: when the API answers, its pods replace the
// checkpoint's pod by pod, as a sync: a pod it holds unchanged brings no
// ADD, UPDATE or DELETE (its containers stay), a changed one is an UPDATE,
// a new one an ADD, and one deleted meanwhile is stopped with its spec's
// grace period, then removed. The checkpoint then keeps the API's set.
func TestReconnectAPIWins(t *testing.T) {
	grace := int64(45)
	gone := ppod("gone", "ug")
	gone.Spec.TerminationGracePeriodSeconds = &grace
	changed := ppod("changed", "uc")
	f := newOfflineFixture(t, time.Now(), ppod("same", "us"), changed, gone)
	f.next(t, podconfig.ADD)

	changedInAPI := changed.DeepCopy()
	changedInAPI.Spec.ActiveDeadlineSeconds = &grace
	f.api.list(t, ppod("same", "us"), changedInAPI, ppod("new", "un"))

	var seen []podconfig.PodUpdate
	deadline := time.After(10 * time.Second)
	for removed := false; !removed; {
		select {
		case u := <-f.updates:
			seen = append(seen, u)
			removed = u.Op == podconfig.REMOVE
		case <-deadline:
			t.Fatalf("no REMOVE; updates %v", seen)
		}
	}
	ops := map[string][]podconfig.Op{}
	var deleted *v1.Pod
	for _, u := range seen {
		for _, p := range u.Pods {
			ops[p.Name] = append(ops[p.Name], u.Op)
			if p.Name == "gone" && u.Op == podconfig.DELETE {
				deleted = p
			}
		}
	}
	for _, op := range ops["same"] {
		if op != podconfig.RECONCILE {
			t.Errorf("the unchanged pod got %s; want nothing but a status reconcile", op)
		}
	}
	if len(ops["changed"]) != 1 || ops["changed"][0] != podconfig.UPDATE {
		t.Errorf("the changed pod got %v; want one UPDATE", ops["changed"])
	}
	if len(ops["new"]) != 1 || ops["new"][0] != podconfig.ADD {
		t.Errorf("the new pod got %v; want one ADD", ops["new"])
	}
	if deleted == nil || deleted.DeletionGracePeriodSeconds == nil || *deleted.DeletionGracePeriodSeconds != grace {
		t.Errorf("the pod deleted while offline: %+v; want a DELETE with its spec's grace period (45 s), then its REMOVE", deleted)
	}
	off, kept := f.cp.state()
	if off || !kept["us"] || !kept["uc"] || !kept["un"] {
		t.Errorf("checkpoint offline=%v kept %v; want online, with the API's pods", off, kept)
	}
	if f.online.Load() != 1 {
		t.Errorf("Online called %d times; want once", f.online.Load())
	}
}

// TestOnlineStartIgnoresCheckpoint: when the API answers in time, the
// checkpoint's pods are never sent, even those the API deleted meanwhile,
// and the checkpoint takes the API's set.
func TestOnlineStartIgnoresCheckpoint(t *testing.T) {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if err := idx.Add(ppod("live", "ul")); err != nil {
		t.Fatal(err)
	}
	cp := &fakeCheckpoint{pods: []*v1.Pod{ppod("deleted-while-down", "ud"), ppod("live", "ul")}}
	updates := make(chan []*v1.Pod, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := New(Config{Updates: updates, Pods: &informer{idx: idx}, Checkpoint: cp,
		OfflineAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	go s.Run(ctx)
	select {
	case snap := <-updates:
		if len(snap) != 1 || snap[0].Name != "live" {
			t.Fatalf("first snapshot = %v; want the API's pod alone", snap)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no snapshot")
	}
	if _, kept := cp.state(); len(kept) != 1 || !kept["ul"] {
		t.Errorf("checkpoint kept %v; want the API's pod alone", kept)
	}
}
