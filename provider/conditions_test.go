package provider

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

func withConditions(p *v1.Pod, conds ...v1.PodCondition) *v1.Pod {
	p = p.DeepCopy()
	p.Status.Conditions = conds
	return p
}

// TestForeignConditions: a condition someone else sets in the API reaches
// the pod the source holds, and survives runlet's next status write.
func TestForeignConditions(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gate := v1.PodCondition{Type: "example.com/gate", Status: v1.ConditionTrue}
	ready := v1.PodCondition{Type: v1.PodReady, Status: v1.ConditionFalse}
	pod := ppod("a", "ua")
	f := newFixture(t, pod)
	if err := f.p.CreatePod(ctx, pod); err != nil {
		t.Fatal(err)
	}
	h := f.p.ConditionsHandler()

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

	// The status write keeps what the API holds now, not what runlet saw.
	flipped := gate
	flipped.Status = v1.ConditionFalse
	if err := f.api.Update(withConditions(pod, ready, flipped)); err != nil {
		t.Fatal(err)
	}
	sent := make(chan *v1.Pod, 1)
	f.p.NotifyPods(ctx, func(p *v1.Pod) { sent <- p })
	go f.status.Run(ctx)
	f.status.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}, gate}})
	select {
	case p := <-sent:
		var got []string
		for _, c := range p.Status.Conditions {
			got = append(got, string(c.Type)+"="+string(c.Status))
		}
		if len(got) != 2 || got[0] != "Ready=True" || got[1] != "example.com/gate=False" {
			t.Fatalf("written conditions %v", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no status written")
	}
}
