package status

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

func TestGenerateObservesTheGeneration(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "app")
	pod.Generation = 7
	foreign := v1.PodCondition{Type: "example.com/Gate", Status: v1.ConditionTrue, ObservedGeneration: 2}
	pod.Status.Conditions = []v1.PodCondition{foreign}
	st := Generate(Input{Pod: pod, Runtime: podStatus(running("c1", "app", 0)), RuntimeName: "podman"})
	if st.ObservedGeneration != 7 {
		t.Errorf("status.observedGeneration = %d, want 7", st.ObservedGeneration)
	}
	for _, c := range st.Conditions {
		want := int64(7)
		if c.Type == foreign.Type {
			want = 2 // another writer's condition keeps what its writer said
		}
		if c.ObservedGeneration != want {
			t.Errorf("condition %s observedGeneration = %d, want %d", c.Type, c.ObservedGeneration, want)
		}
	}
}

func TestManagerNeverTakesTheGenerationBack(t *testing.T) {
	now := time.Now()
	m := newTestManager(&now)
	pod := testPod(v1.RestartPolicyAlways, "app")
	newer := st(v1.PodRunning, v1.ConditionTrue)
	newer.ObservedGeneration = 5
	m.SetPodStatus(pod, newer)
	late := st(v1.PodRunning, v1.ConditionFalse)
	late.ObservedGeneration = 4
	m.SetPodStatus(pod, late)
	got, _ := m.GetPod(pod.UID)
	if got.Status.ObservedGeneration != 5 {
		t.Errorf("observedGeneration = %d after a late sync of generation 4, want 5", got.Status.ObservedGeneration)
	}
}
