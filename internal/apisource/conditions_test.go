package apisource

import (
	"testing"

	v1 "k8s.io/api/core/v1"
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
