package provider

import (
	"context"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/logtest"
	"github.com/runlet/runlet/internal/podconfig"
	"github.com/runlet/runlet/internal/status"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

func ppod(name, uid string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: types.UID(uid)},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "img:1"}}}}
}

type fixture struct {
	p      *Provider
	api    cache.Indexer
	source chan []*v1.Pod
	status *status.Manager
}

func newFixture(t *testing.T, inAPI ...*v1.Pod) *fixture {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, p := range inAPI {
		if err := idx.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	log := logtest.Discard()
	f := &fixture{api: idx, source: make(chan []*v1.Pod, 10), status: status.NewManager(status.Config{})}
	f.p = New(Config{NodeName: "node-1", Source: f.source, Status: f.status,
		APIPods: corev1listers.NewPodLister(idx), Log: log})
	return f
}

// snap returns the api source's current snapshot by name.
func (f *fixture) snap() map[string]*v1.Pod {
	out := map[string]*v1.Pod{}
	for _, p := range f.p.snapshot() {
		out[p.Name] = p
	}
	return out
}

func TestCreateGetPods(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	mirror := ppod("mirror", "m")
	mirror.Annotations = map[string]string{podconfig.ConfigMirrorAnnotation: "hash"}
	for _, p := range []*v1.Pod{ppod("a", "ua"), ppod("b", "ub"), mirror} {
		if err := f.p.CreatePod(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.p.GetPod(ctx, "ns", "mirror"); !errdefs.IsNotFound(err) {
		t.Errorf("GetPod(mirror) = %v; want NotFound: mirror pods are not run", err)
	}
	if _, err := f.p.GetPod(ctx, "ns", "nope"); !errdefs.IsNotFound(err) {
		t.Errorf("GetPod(unknown) = %v; want NotFound", err)
	}
	running := v1.PodStatus{Phase: v1.PodRunning}
	f.status.SetPodStatus(ppod("a", "ua"), running)
	got, err := f.p.GetPod(ctx, "ns", "a")
	if err != nil || got.UID != "ua" || got.Status.Phase != v1.PodRunning {
		t.Errorf("GetPod(a) = %+v, %v; want it with the status manager's status", got, err)
	}
	if st, err := f.p.GetPodStatus(ctx, "ns", "a"); err != nil || st.Phase != v1.PodRunning {
		t.Errorf("GetPodStatus(a) = %+v, %v", st, err)
	}
	pods, err := f.p.GetPods(ctx)
	if err != nil || len(pods) != 2 {
		t.Fatalf("GetPods = %d pods, %v; want a and b", len(pods), err)
	}
	for _, p := range pods {
		if p.Name == "mirror" {
			t.Error("GetPods lists the mirror pod")
		}
	}
	// Mutating what GetPod returned must not change the provider's copy.
	got.Spec.Containers[0].Image = "changed"
	if f.snap()["a"].Spec.Containers[0].Image != "img:1" {
		t.Error("GetPod returned the provider's own object")
	}
}

func TestDeletePod(t *testing.T) {
	ctx := context.Background()
	grace := int64(7)
	deletedAt := metav1.NewTime(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	withDeletion := func(p *v1.Pod) *v1.Pod {
		p.DeletionTimestamp, p.DeletionGracePeriodSeconds = &deletedAt, &grace
		return p
	}
	cases := []struct {
		name     string
		handed   bool // CreatePod was called
		inAPI    bool // still in the lister
		arg      *v1.Pod
		notFound bool
		want     string // "deleting", "gone"
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
				if err := f.p.CreatePod(ctx, ppod("a", "ua")); err != nil {
					t.Fatal(err)
				}
			}
			err := f.p.DeletePod(ctx, tc.arg)
			if errdefs.IsNotFound(err) != tc.notFound {
				t.Fatalf("DeletePod = %v; want notFound=%v", err, tc.notFound)
			}
			got, ok := f.snap()["a"]
			switch tc.want {
			case "forced":
				if !ok || got.DeletionTimestamp == nil || got.DeletionGracePeriodSeconds == nil || *got.DeletionGracePeriodSeconds != 0 {
					t.Fatalf("pod = %+v; want it sent once as deleted with grace 0", got)
				}
				f.p.dropForced(f.p.snapshot())
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

func TestNotifyPodsOnlyKnownAPIPods(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFixture(t)
	if err := f.p.CreatePod(ctx, ppod("a", "ua")); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 10)
	f.p.NotifyPods(ctx, func(p *v1.Pod) { got <- p.Name })
	go f.status.Run(ctx)
	static := ppod("static", "us")
	static.Annotations = map[string]string{podconfig.ConfigSourceAnnotation: podconfig.FileSource}
	for _, p := range []*v1.Pod{static, ppod("stranger", "ux"), ppod("a", "stale-uid"), ppod("a", "ua")} {
		f.status.SetPodStatus(p, v1.PodStatus{Phase: v1.PodRunning})
	}
	select {
	case name := <-got:
		if name != "a" {
			t.Errorf("notified %s; want only the api pod a", name)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no notification")
	}
	// The three others were delivered in the same batch, or never.
	select {
	case name := <-got:
		t.Errorf("also notified %s", name)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestRunWaitsForHandover(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f := newFixture(t, ppod("a", "ua"))
	initial := make(chan struct{})
	go f.p.Run(ctx, initial)
	close(initial)
	time.Sleep(200 * time.Millisecond) // give Run the chance to send too early
	if err := f.p.CreatePod(ctx, ppod("a", "ua")); err != nil {
		t.Fatal(err)
	}
	select {
	case snap := <-f.source:
		if len(snap) != 1 || snap[0].UID != "ua" {
			t.Errorf("first snapshot = %v; want the handed-over pod", snap)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no snapshot")
	}
}

// TestPodReplacedUnderSameName: the framework names pods by namespace/name
// and hands over a pod only when GetPod does not return an equal one. A pod
// re-created with the same spec (StatefulSets, replace --force) while runlet
// still holds the old one must be handed over, and the old one stopped.
func TestPodReplacedUnderSameName(t *testing.T) {
	ctx := context.Background()
	old, replacement := ppod("web-0", "old"), ppod("web-0", "new")
	f := newFixture(t, old)
	if err := f.p.CreatePod(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := f.api.Update(replacement); err != nil {
		t.Fatal(err)
	}
	if got, err := f.p.GetPod(ctx, "ns", "web-0"); !errdefs.IsNotFound(err) {
		t.Fatalf("GetPod = %v, %v; want NotFound while the API holds a pod runlet was not handed", got.UID, err)
	}
	if err := f.p.CreatePod(ctx, replacement); err != nil {
		t.Fatal(err)
	}
	if got, err := f.p.GetPod(ctx, "ns", "web-0"); err != nil || got.UID != "new" {
		t.Fatalf("GetPod = %v, %v; want the replacement", got, err)
	}
	byUID := map[types.UID]*v1.Pod{}
	for _, p := range f.p.snapshot() {
		byUID[p.UID] = p
	}
	if o := byUID["old"]; o == nil || o.DeletionGracePeriodSeconds == nil || *o.DeletionGracePeriodSeconds != 0 {
		t.Fatalf("old pod = %+v; want it sent once as deleted with grace 0", o)
	}
	f.p.dropForced(f.p.snapshot())
	if snap := f.p.snapshot(); len(snap) != 1 || snap[0].UID != "new" {
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
	initial := make(chan struct{})
	go f.p.Run(ctx, initial)
	close(initial)
	select {
	case snap := <-f.source:
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
