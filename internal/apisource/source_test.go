package apisource

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/podconfig"
	"github.com/runlet/runlet/internal/podtest"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

func ppod(name, uid string) *v1.Pod {
	return podtest.New(name, podtest.Namespace("ns"), podtest.UID(uid),
		podtest.Containers(v1.Container{Name: "c", Image: "img:1"}))
}

// informer is the node's pod informer as a fixed cache.
type informer struct {
	idx      cache.Indexer
	handlers []cache.ResourceEventHandler
}

func (i *informer) Lister() corev1listers.PodLister { return corev1listers.NewPodLister(i.idx) }
func (i *informer) Synced() bool                    { return true }
func (i *informer) AddEventHandler(h cache.ResourceEventHandler) error {
	i.handlers = append(i.handlers, h)
	return nil
}

type fixture struct {
	s       *Source
	api     *informer
	updates chan []*v1.Pod
}

func newFixture(t *testing.T, inAPI ...*v1.Pod) *fixture {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, p := range inAPI {
		if err := idx.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	f := &fixture{api: &informer{idx: idx}, updates: make(chan []*v1.Pod, 10)}
	s, err := New(Config{Updates: f.updates, Pods: f.api})
	if err != nil {
		t.Fatal(err)
	}
	f.s = s
	return f
}

// snap returns the source's current snapshot by name.
func (f *fixture) snap() map[string]*v1.Pod {
	out := map[string]*v1.Pod{}
	for _, p := range f.s.snapshot() {
		out[p.Name] = p
	}
	return out
}

func TestAddGet(t *testing.T) {
	f := newFixture(t)
	mirror := ppod("mirror", "m")
	mirror.Annotations = map[string]string{podconfig.ConfigMirrorAnnotation: "hash"}
	for _, p := range []*v1.Pod{ppod("a", "ua"), ppod("b", "ub"), mirror} {
		f.s.Add(p)
	}
	if _, ok := f.s.Get("ns", "mirror"); ok {
		t.Error("Get(mirror) found it: mirror pods are not run")
	}
	if _, ok := f.s.Get("ns", "nope"); ok {
		t.Error("Get(unknown) found it")
	}
	if got := f.s.Pods(); len(got) != 2 {
		t.Errorf("Pods = %d; want a and b", len(got))
	}
	if !f.s.Holds("ua") || f.s.Holds("m") {
		t.Error("Holds disagrees with what was added")
	}
	got, ok := f.s.Get("ns", "a")
	if !ok || got.UID != "ua" {
		t.Fatalf("Get(a) = %v, %v", got, ok)
	}
	// Mutating what Get returned must not change the source's copy.
	got.Spec.Containers[0].Image = "changed"
	if f.snap()["a"].Spec.Containers[0].Image != "img:1" {
		t.Error("Get returned the source's own object")
	}
}

func TestDelete(t *testing.T) {
	grace := int64(7)
	deletedAt := metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	withDeletion := func(p *v1.Pod) *v1.Pod {
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &deletedAt, &grace
		return p
	}
	cases := []struct {
		name     string
		handed   bool // Add was called
		inAPI    bool // still in the lister
		arg      *v1.Pod
		notFound bool
		want     string // "deleting", "gone", "forced", "kept"
	}{
		{"in API: graceful delete", true, true, withDeletion(ppod("a", "ua")), false, "deleting"},
		{"in API, no timestamp given", true, true, ppod("a", "ua"), false, "deleting"},
		{"gone from API without a graceful delete: killed at once, then removed", true, false, ppod("a", "ua"), false, "forced"},
		{"never handed over but in API: taken on", false, true, withDeletion(ppod("a", "ua")), false, "deleting"},
		{"unknown", false, false, ppod("a", "ua"), true, "gone"},
		{"other UID", true, true, ppod("a", "other"), true, "kept"},
		{"mirror pod: its static pod keeps running", true, true, func() *v1.Pod {
			p := withDeletion(ppod("a", "ua"))
			p.Annotations = map[string]string{podconfig.ConfigMirrorAnnotation: "hash"}
			return p
		}(), false, "kept"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var api []*v1.Pod
			if tc.inAPI {
				api = append(api, ppod("a", "ua"))
			}
			f := newFixture(t, api...)
			if tc.handed {
				f.s.Add(ppod("a", "ua"))
			}
			err := f.s.Delete(tc.arg)
			if errors.Is(err, ErrNotFound) != tc.notFound {
				t.Fatalf("Delete = %v; want notFound=%v", err, tc.notFound)
			}
			got, ok := f.snap()["a"]
			switch tc.want {
			case "forced":
				if !ok || got.DeletionTimestamp == nil || got.DeletionGracePeriodSeconds == nil || *got.DeletionGracePeriodSeconds != 0 {
					t.Fatalf("pod = %+v; want it sent once as deleted with grace 0", got)
				}
				f.s.dropForced(f.s.snapshot())
				if _, still := f.snap()["a"]; still {
					t.Error("pod still in the snapshot after its deletion was sent")
				}
			case "gone":
				if ok {
					t.Errorf("pod still in the snapshot: %+v", got.ObjectMeta)
				}
			case "kept":
				if !ok || got.DeletionTimestamp != nil {
					t.Errorf("pod = %+v; want it untouched", got)
				}
			case "deleting":
				if !ok || got.DeletionTimestamp == nil {
					t.Fatalf("pod = %+v; want it kept with a deletion timestamp", got)
				}
				if tc.arg.DeletionTimestamp != nil && (!got.DeletionTimestamp.Equal(&deletedAt) ||
					got.DeletionGracePeriodSeconds == nil || *got.DeletionGracePeriodSeconds != grace) {
					t.Errorf("deletion = %v/%v; want the API's %v/%d", got.DeletionTimestamp, got.DeletionGracePeriodSeconds, deletedAt, grace)
				}
			}
		})
	}
}

// TestPodReplacedUnderSameName: the framework names pods by namespace/name
// and hands over a pod only when GetPod does not return an equal one. A pod
// re-created with the same spec (StatefulSets, replace --force) while runlet
// still holds the old one must be handed over, and the old one stopped.
func TestPodReplacedUnderSameName(t *testing.T) {
	old, replacement := ppod("web-0", "old"), ppod("web-0", "new")
	f := newFixture(t, old)
	f.s.Add(old)
	if err := f.api.idx.Update(replacement); err != nil {
		t.Fatal(err)
	}
	if got, ok := f.s.Get("ns", "web-0"); ok {
		t.Fatalf("Get = %v; want nothing while the API holds a pod runlet was not handed", got.UID)
	}
	f.s.Add(replacement)
	if got, ok := f.s.Get("ns", "web-0"); !ok || got.UID != "new" {
		t.Fatalf("Get = %v, %v; want the replacement", got, ok)
	}
	byUID := map[types.UID]*v1.Pod{}
	for _, p := range f.s.snapshot() {
		byUID[p.UID] = p
	}
	if o := byUID["old"]; o == nil || o.DeletionGracePeriodSeconds == nil || *o.DeletionGracePeriodSeconds != 0 {
		t.Fatalf("old pod = %+v; want it sent once as deleted with grace 0", o)
	}
	f.s.dropForced(f.s.snapshot())
	if snap := f.s.snapshot(); len(snap) != 1 || snap[0].UID != "new" {
		t.Errorf("snapshot after the old pod's deletion was sent = %d pods; want the replacement only", len(snap))
	}
}

// TestFirstSnapshotHoldsTheNodesPods: the api source starts from every pod
// the API binds to the node, whether the framework has handed it over yet
// or never will (a pod that ended before runlet started), deleting ones
// with their deletion; mirror pods are not the source's.
func TestFirstSnapshotHoldsTheNodesPods(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := ppod("job", "uj")
	done.Status.Phase = v1.PodSucceeded
	now := metav1.Now()
	deleting := ppod("going", "ug")
	deleting.DeletionTimestamp = &now
	mirror := ppod("static-n1", "um")
	mirror.Annotations = map[string]string{podconfig.ConfigMirrorAnnotation: "hash"}
	f := newFixture(t, done, ppod("late", "ul"), deleting, mirror)
	go f.s.Run(ctx)
	select {
	case snap := <-f.updates:
		got := map[string]*v1.Pod{}
		for _, p := range snap {
			got[p.Name] = p
		}
		if len(got) != 3 || got["job"] == nil || got["late"] == nil || got["going"] == nil {
			t.Fatalf("first snapshot = %v; want job, late and going", got)
		}
		if got["job"].Status.Phase != v1.PodSucceeded || got["going"].DeletionTimestamp == nil {
			t.Errorf("first snapshot lost the API's status or deletion: job %s, going %v", got["job"].Status.Phase, got["going"].DeletionTimestamp)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no snapshot")
	}
}
