package apisource

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/cache"
)

func withConditions(p *v1.Pod, conds ...v1.PodCondition) *v1.Pod {
	p = p.DeepCopy()
	p.Status.Conditions = conds
	return p
}

// TestForeignConditions: a condition someone else sets in the API reaches
// the pod the source holds.
func TestForeignConditions(t *testing.T) {
	gate := v1.PodCondition{Type: "example.com/gate", Status: v1.ConditionTrue}
	ready := v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse}
	pod := ppod("a", "ua")
	f := newFixture(t, pod)
	f.s.Add(pod)
	if len(f.api.handlers) != 1 {
		t.Fatalf("%d handlers on the informer; want the source's one", len(f.api.handlers))
	}
	h := f.api.handlers[0]

	// runlet's own condition changing is not news.
	h.OnUpdate(pod, withConditions(pod, ready))
	if got := f.snap()["a"]; len(got.Status.Conditions) != 0 {
		t.Fatalf("own condition taken from the API: %+v", got.Status.Conditions)
	}
	h.OnUpdate(withConditions(pod, ready), withConditions(pod, ready, gate))
	if got := f.snap()["a"]; len(got.Status.Conditions) != 2 {
		t.Fatalf("gate condition not taken: %+v", got.Status.Conditions)
	}
	h.OnUpdate(pod, withConditions(ppod("a", "other-uid"), gate)) // another pod of that name
	if got := f.snap()["a"].UID; got != "ua" {
		t.Fatalf("pod replaced by a namesake: %s", got)
	}
}

// TestPodLevelResize: a resize of the pod's own resources, which the
// framework does not hand over, reaches the pod the source holds, with the
// generation that made it.
func TestPodLevelResize(t *testing.T) {
	pod := ppod("a", "ua")
	pod.Generation = 1
	f := newFixture(t, pod)
	f.s.Add(pod)
	h := f.api.handlers[0]
	resized := pod.DeepCopy()
	resized.Generation = 2
	resized.Spec.Resources = &v1.ResourceRequirements{Limits: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}}
	h.OnUpdate(pod, resized)
	got := f.snap()["a"]
	if got.Spec.Resources == nil || got.Spec.Resources.Limits.Cpu().String() != "2" || got.Generation != 2 {
		t.Fatalf("held pod after a pod-level resize: resources %+v generation %d; want the API's, 2", got.Spec.Resources, got.Generation)
	}
	stale := resized.DeepCopy()
	stale.Generation = 1
	stale.Spec.Resources.Limits[v1.ResourceCPU] = resource.MustParse("3")
	h.OnUpdate(resized, stale)
	if got := f.snap()["a"]; got.Generation != 2 {
		t.Errorf("generation went back to %d", got.Generation)
	}
}

// TestDeletedWhileTheWatchWasDown: a pod the API deleted while the watch was
// down comes back from the informer as a tombstone, which the framework
// drops; the source lets go of the pod, and only of one the API no longer
// holds.
func TestDeletedWhileTheWatchWasDown(t *testing.T) {
	gone, kept := ppod("gone", "ug"), ppod("kept", "uk")
	f := newFixture(t, gone, kept)
	f.s.Add(gone)
	f.s.Add(kept)
	if err := f.api.idx.Delete(gone); err != nil {
		t.Fatal(err)
	}
	h := f.api.handlers[0]
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/gone", Obj: gone})
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "ns/kept", Obj: kept}) // still in the API: a stale tombstone
	got := f.snap()
	if g, ok := got["gone"]; !ok || g.DeletionTimestamp == nil || g.DeletionGracePeriodSeconds == nil || *g.DeletionGracePeriodSeconds != 0 {
		t.Fatalf("pod deleted behind the watch: %+v; want it stopped at once, then removed", g)
	}
	if k := got["kept"]; k == nil || k.DeletionTimestamp != nil {
		t.Errorf("pod the API still holds: %+v; want it kept as it was", k)
	}
	f.s.dropForced(f.s.snapshot())
	if _, ok := f.snap()["gone"]; ok {
		t.Error("the deleted pod is still held after its deletion was sent")
	}
}
