package provider

import (
	"context"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/apisource"
	"github.com/runlet/runlet/internal/podconfig"
	"github.com/runlet/runlet/internal/podtest"
	"github.com/runlet/runlet/internal/status"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	v1 "k8s.io/api/core/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

func ppod(name, uid string) *v1.Pod {
	return podtest.New(name, podtest.Namespace("ns"), podtest.UID(uid),
		podtest.Containers(v1.Container{Name: "c", Image: "img:1"}))
}

// informer is the node's pod informer as a fixed cache.
type informer struct{ idx cache.Indexer }

func (i informer) Lister() corev1listers.PodLister                  { return corev1listers.NewPodLister(i.idx) }
func (i informer) Synced() bool                                     { return true }
func (i informer) AddEventHandler(cache.ResourceEventHandler) error { return nil }

type fixture struct {
	p      *Provider
	source *apisource.Source
	status *status.Manager
}

func newFixture(t *testing.T, inAPI ...*v1.Pod) *fixture {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	for _, p := range inAPI {
		if err := idx.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	src, err := apisource.New(apisource.Config{Updates: make(chan []*v1.Pod, 10), Pods: informer{idx}})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{source: src, status: status.NewManager(status.Config{})}
	f.p = New(Config{Source: src, Status: f.status})
	return f
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
	if err := f.p.DeletePod(ctx, ppod("nope", "un")); !errdefs.IsNotFound(err) {
		t.Errorf("DeletePod(unknown) = %v; want NotFound", err)
	}
}

// TestNotifyPodsNeverCallsBack: statuses never go through the framework,
// which would write them as whole-object updates; the status manager writes
// them itself.
func TestNotifyPodsNeverCallsBack(t *testing.T) {
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
	for _, p := range []*v1.Pod{static, ppod("a", "ua")} {
		f.status.SetPodStatus(p, v1.PodStatus{Phase: v1.PodRunning})
	}
	select {
	case name := <-got:
		t.Errorf("the framework was handed %s's status", name)
	case <-time.After(200 * time.Millisecond):
	}
	if st, err := f.p.GetPodStatus(ctx, "ns", "a"); err != nil || st.Phase != v1.PodRunning {
		t.Errorf("GetPodStatus = %v, %v; want the status manager's Running", st, err)
	}
}
