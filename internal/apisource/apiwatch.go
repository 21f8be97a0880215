package apisource

import (
	"github.com/runlet/runlet/internal/status"
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/tools/cache"
)

// apiHandler watches the API's pods for what the framework does not hand
// a provider:
//   - conditions that others set (readiness gates' conditions,
//     DisruptionTarget): a changed one reaches podconfig as a status change
//     (a RECONCILE), so the pod's Ready condition follows its readiness
//     gates;
//   - a resize of pod-level resources (spec.resources): virtual-kubelet
//     compares a pod's containers, not the pod's own resources, and would
//     drop it;
//   - a pod deleted while the watch was down: the informer's list after
//     the watch comes back reports it as a tombstone, which virtual-kubelet
//     drops, and the pod would run on for good.
func (s *Source) apiHandler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(obj any) {
			tomb, ok := obj.(cache.DeletedFinalStateUnknown)
			if !ok {
				return
			}
			// A stale tombstone names a pod the API still holds.
			if pod, ok := tomb.Obj.(*v1.Pod); ok && !s.inAPI(pod) {
				_ = s.Delete(pod) // ErrNotFound: a pod the source did not hold
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*v1.Pod)
			cur, ok2 := newObj.(*v1.Pod)
			if !ok1 || !ok2 {
				return
			}
			if !foreignConditionsEqual(old.Status.Conditions, cur.Status.Conditions) {
				s.takeConditions(cur)
			}
			if !apiequality.Semantic.DeepEqual(old.Spec.Resources, cur.Spec.Resources) {
				s.takePodResources(cur)
			}
		},
	}
}

// takePodResources records the API's pod-level resources, and the
// generation that set them, on the pod the source holds.
func (s *Source) takePodResources(api *v1.Pod) {
	s.take(api, func(held *v1.Pod) bool {
		return apiequality.Semantic.DeepEqual(held.Spec.Resources, api.Spec.Resources)
	}, func(next *v1.Pod) {
		next.Spec.Resources = api.Spec.Resources.DeepCopy()
		next.Generation = max(next.Generation, api.Generation)
	})
}

// takeConditions records the API's conditions on the pod the source holds.
func (s *Source) takeConditions(api *v1.Pod) {
	s.take(api, func(held *v1.Pod) bool {
		return foreignConditionsEqual(held.Status.Conditions, api.Status.Conditions)
	}, func(next *v1.Pod) {
		next.Status.Conditions = api.Status.DeepCopy().Conditions
	})
}

// take replaces the pod the source holds under api's UID with a copy that
// apply changes, unless agrees says the held pod already has what api has.
func (s *Source) take(api *v1.Pod, agrees func(held *v1.Pod) bool, apply func(next *v1.Pod)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.set.pods[api.UID]
	if !ok || agrees(cur) {
		return
	}
	next := cur.DeepCopy()
	apply(next)
	s.set.pods[api.UID] = next
	s.markDirty()
}

func foreignConditionsEqual(a, b []v1.PodCondition) bool {
	fa, fb := foreign(a), foreign(b)
	if len(fa) != len(fb) {
		return false
	}
	for t, c := range fa {
		o, ok := fb[t]
		if !ok || o.Status != c.Status || o.Reason != c.Reason || o.Message != c.Message {
			return false
		}
	}
	return true
}

func foreign(conds []v1.PodCondition) map[v1.PodConditionType]v1.PodCondition {
	out := map[v1.PodConditionType]v1.PodCondition{}
	for _, c := range conds {
		if !status.OwnedCondition(c.Type) {
			out[c.Type] = c
		}
	}
	return out
}
