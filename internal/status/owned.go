package status

import (
	v1 "k8s.io/api/core/v1"
)

// ownedConditions are the pod conditions runlet sets, as the kubelet's
// PodConditionsByKubelet (with PodReadyToStartContainers and
// AllContainersRestarting, whose gates are on). Every other condition
// belongs to someone else (readiness gates' controllers, DisruptionTarget
// from the API's eviction and preemption) and is kept as the API has it.
var ownedConditions = map[v1.PodConditionType]bool{
	v1.PodScheduled:              true,
	v1.PodReady:                  true,
	v1.PodInitialized:            true,
	v1.ContainersReady:           true,
	v1.PodResizeInProgress:       true,
	v1.PodResizePending:          true,
	v1.PodReadyToStartContainers: true,
	v1.AllContainersRestarting:   true,
}

// OwnedCondition reports a condition type runlet sets itself.
func OwnedCondition(t v1.PodConditionType) bool { return ownedConditions[t] }

// foreignConditions returns the conditions of the pod's status runlet does
// not own, to be carried into the status it writes.
func foreignConditions(conds []v1.PodCondition) []v1.PodCondition {
	var out []v1.PodCondition
	for _, c := range conds {
		if !OwnedCondition(c.Type) {
			out = append(out, c)
		}
	}
	return out
}

// KeepForeignConditions replaces the conditions of st that runlet does not
// own with those of the API's current status (the kubelet's mergePodStatus):
// a status write must not wipe what others set since it was generated.
//
// DisruptionTarget is shared: the API's is kept, but one runlet set (an
// eviction) replaces it once the pod is terminal, as the kubelet sends it.
func KeepForeignConditions(st *v1.PodStatus, api []v1.PodCondition) {
	out := make([]v1.PodCondition, 0, len(st.Conditions)+len(api))
	var disruption *v1.PodCondition
	for i, c := range st.Conditions {
		switch {
		case OwnedCondition(c.Type):
			out = append(out, c)
		case c.Type == v1.DisruptionTarget && isTerminal(st.Phase):
			disruption = &st.Conditions[i]
		}
	}
	out = append(out, foreignConditions(api)...)
	if disruption != nil {
		out = replaceOrAppend(out, *disruption)
	}
	st.Conditions = out
}

func replaceOrAppend(conds []v1.PodCondition, c v1.PodCondition) []v1.PodCondition {
	for i := range conds {
		if conds[i].Type == c.Type {
			conds[i] = c
			return conds
		}
	}
	return append(conds, c)
}
