package status

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestKeepForeignConditionsSharesDisruptionTarget: conditions others set
// are taken from the API, but the DisruptionTarget an eviction sets goes out
// with the terminal status, as the kubelet's mergePodStatus sends it.
func TestKeepForeignConditionsSharesDisruptionTarget(t *testing.T) {
	gate := v1.PodCondition{Type: "example.com/gate", Status: v1.ConditionTrue}
	evicted := v1.PodCondition{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonTerminationByKubelet}
	st := &v1.PodStatus{Phase: v1.PodFailed, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse}, evicted}}
	KeepForeignConditions(st, []v1.PodCondition{gate})
	if len(st.Conditions) != 3 || st.Conditions[1] != gate || st.Conditions[2].Reason != v1.PodReasonTerminationByKubelet {
		t.Errorf("conditions %+v; want Ready, the API's gate, runlet's DisruptionTarget", st.Conditions)
	}

	// Before the pod is terminal the API's say stands.
	st = &v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{evicted}}
	KeepForeignConditions(st, []v1.PodCondition{gate})
	if len(st.Conditions) != 1 || st.Conditions[0] != gate {
		t.Errorf("conditions %+v; want only the API's gate", st.Conditions)
	}
}
