package status

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// ReadinessGatesNotReady is the Ready condition's reason when every container
// is ready but a readiness gate is not (the kubelet's).
const ReadinessGatesNotReady = "ReadinessGatesNotReady"

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
func KeepForeignConditions(st *v1.PodStatus, api []v1.PodCondition) {
	out := make([]v1.PodCondition, 0, len(st.Conditions)+len(api))
	for _, c := range st.Conditions {
		if OwnedCondition(c.Type) {
			out = append(out, c)
		}
	}
	st.Conditions = append(out, foreignConditions(api)...)
}

// applyReadinessGates turns a true Ready condition false while a readiness
// gate's condition is missing or not True, with the kubelet's reason and
// message (generatePodReadyCondition). conds are the pod's conditions as the
// API has them.
func applyReadinessGates(pod *v1.Pod, ready *v1.PodCondition, conds []v1.PodCondition) {
	if ready.Status != v1.ConditionTrue {
		return
	}
	var unready []string
	for _, rg := range pod.Spec.ReadinessGates {
		c := findCondition(conds, rg.ConditionType)
		switch {
		case c == nil:
			unready = append(unready, fmt.Sprintf("corresponding condition of pod readiness gate %q does not exist.", string(rg.ConditionType)))
		case c.Status != v1.ConditionTrue:
			unready = append(unready, fmt.Sprintf("the status of pod readiness gate %q is not \"True\", but %v", string(rg.ConditionType), c.Status))
		}
	}
	if len(unready) > 0 {
		ready.Status, ready.Reason, ready.Message = v1.ConditionFalse, ReadinessGatesNotReady, strings.Join(unready, ", ")
	}
}

func findCondition(conds []v1.PodCondition, t v1.PodConditionType) *v1.PodCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// containersReady is the ContainersReady rule: every container ready, in a
// running pod.
func containersReady(st *v1.PodStatus) bool {
	return allReady(st.ContainerStatuses) && st.Phase == v1.PodRunning
}
