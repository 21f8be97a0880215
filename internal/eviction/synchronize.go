/*
Copyright 2016 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Ported from k8s.io/kubernetes v1.37.2 pkg/kubelet/eviction/eviction_manager.go:
// synchronize and evictPod. Changes: the signals come from the node's part
// of the summary, and the pods' part is read only when pods are to be
// ranked (it costs a stats call to podman and a walk of the pods'
// directories) or when some pod has a local storage limit to check; runlet
// has no image or container garbage collection to try before evicting.

package eviction

import (
	"context"
	"slices"
	"sort"

	"github.com/runlet/runlet/internal/podconfig"
	"github.com/runlet/runlet/internal/podutil"
	v1 "k8s.io/api/core/v1"
)

// systemCriticalPriority is the kubelet's scheduling.SystemCriticalPriority.
const systemCriticalPriority = 2 * 1000000000

// synchronize is one round of the control loop: it observes the signals,
// updates the pressure conditions, and evicts the pods over their local
// storage limits, or else at most one pod; it returns the pods evicted.
func (m *Manager) synchronize(ctx context.Context) []*v1.Pod {
	log := m.cfg.Log
	if m.rankFuncs == nil {
		hasImageFs, err := m.cfg.DedicatedImageFs()
		if err != nil {
			log.WithError(err).Error("eviction manager: cannot tell whether the image filesystem is dedicated")
			return nil
		}
		m.dedicatedImageFs = hasImageFs
		m.rankFuncs = buildSignalToRankFunc(hasImageFs)
	}
	summary, err := m.cfg.Stats.NodeSummary(ctx)
	if err != nil {
		log.WithError(err).Error("eviction manager: failed to get summary stats")
		return nil
	}
	observations, _ := makeSignalObservations(summary)
	thresholds := m.update(m.cfg.Thresholds, observations)

	activePods := m.cfg.ActivePods()
	if len(thresholds) == 0 && !slices.ContainsFunc(activePods, hasStorageLimits) {
		return nil
	}
	full, err := m.cfg.Stats.Summary(ctx)
	if err != nil {
		log.WithError(err).Error("eviction manager: failed to get summary stats of the pods")
		return nil
	}
	observations, statsFunc := makeSignalObservations(full)
	// evict pods if there is a resource usage violation from local volume temporary storage
	// If eviction happens in localStorageEviction function, skip the rest of eviction action
	if evicted := m.localStorageEviction(activePods, statsFunc); len(evicted) > 0 {
		return evicted
	}
	if len(thresholds) == 0 {
		return nil
	}
	if pod := m.evictOne(thresholds, observations, activePods, statsFunc); pod != nil {
		return []*v1.Pod{pod}
	}
	return nil
}

// evictOne evicts the first pod in rank for the resource most needed.
func (m *Manager) evictOne(thresholds []Threshold, observations signalObservations, activePods []*v1.Pod, statsFunc statsFunc) *v1.Pod {
	log := m.cfg.Log
	// rank the thresholds by eviction priority
	sort.Sort(byEvictionPriority(thresholds))
	thresholdToReclaim, resourceToReclaim, foundAny := getReclaimableThreshold(thresholds)
	if !foundAny {
		return nil
	}
	log.WithField("resourceName", resourceToReclaim).Info("eviction manager: attempting to reclaim")
	// record an event about the resources we are now attempting to reclaim via eviction
	m.cfg.Recorder.Eventf(m.cfg.NodeRef, v1.EventTypeWarning, "EvictionThresholdMet", "Attempting to reclaim %s", resourceToReclaim)
	log.WithField("resourceName", resourceToReclaim).Info("eviction manager: must evict pod(s) to reclaim")

	rank, ok := m.rankFuncs[thresholdToReclaim.Signal]
	if !ok {
		log.WithField("threshold", thresholdToReclaim.Signal).Error("eviction manager: no ranking function for signal")
		return nil
	}
	// the only candidates viable for eviction are those pods that had anything running.
	if len(activePods) == 0 {
		log.Error("eviction manager: eviction thresholds have been met, but no pods are active to evict")
		return nil
	}
	// rank the running pods for eviction for the specified resource
	rank(activePods, statsFunc)
	log.WithField("pods", podNames(activePods)).Info("eviction manager: pods ranked for eviction")

	// we kill at most a single pod during each eviction interval
	for _, pod := range activePods {
		gracePeriodOverride := int64(immediateEvictionGracePeriodSeconds)
		if !isHardEvictionThreshold(thresholdToReclaim) {
			gracePeriodOverride = m.cfg.MaxPodGracePeriodSeconds
			if pod.Spec.TerminationGracePeriodSeconds != nil {
				gracePeriodOverride = min(m.cfg.MaxPodGracePeriodSeconds, *pod.Spec.TerminationGracePeriodSeconds)
			}
		}
		message, annotations := evictionMessage(resourceToReclaim, pod, statsFunc, thresholds, observations)
		condition := &v1.PodCondition{
			Type:               v1.DisruptionTarget,
			ObservedGeneration: pod.Generation,
			Status:             v1.ConditionTrue,
			Reason:             v1.PodReasonTerminationByKubelet,
			Message:            message,
		}
		if m.evictPod(pod, gracePeriodOverride, message, annotations, condition) {
			return pod
		}
	}
	log.Info("eviction manager: unable to evict any pods from the node")
	return nil
}

// update records what this round observed and returns the thresholds to
// act on: met for their grace period, with newer figures than last round.
func (m *Manager) update(configured []Threshold, observations signalObservations) []Threshold {
	// determine the set of thresholds met independent of grace period
	thresholds := thresholdsMet(configured, observations, false)
	// determine the set of thresholds previously met that have not yet satisfied the associated min-reclaim
	if len(m.thresholdsMet) > 0 {
		thresholdsNotYetResolved := thresholdsMet(m.thresholdsMet, observations, true)
		thresholds = mergeThresholds(thresholds, thresholdsNotYetResolved)
	}
	now := m.cfg.Clock.Now()
	firstObservedAt := thresholdsFirstObservedAt(thresholds, m.thresholdsFirstObservedAt, now)
	// the set of node conditions that are triggered by currently observed thresholds
	conditions := nodeConditions(thresholds)
	lastObservedAt := nodeConditionsLastObservedAt(conditions, m.nodeConditionsLastObservedAt, now)
	// node conditions report true if it has been observed within the transition period window
	conditions = nodeConditionsObservedSince(lastObservedAt, m.cfg.PressureTransitionPeriod, now)
	// determine the set of thresholds we need to drive eviction behavior (i.e. all grace periods are met)
	thresholds = thresholdsMetGracePeriod(firstObservedAt, now)

	m.mu.Lock()
	defer m.mu.Unlock()
	if !sameConditions(m.nodeConditions, conditions) {
		m.cfg.Log.WithField("conditions", conditions).Info("eviction manager: node pressure conditions changed")
	}
	m.nodeConditions = conditions
	m.thresholdsFirstObservedAt = firstObservedAt
	m.nodeConditionsLastObservedAt = lastObservedAt
	m.thresholdsMet = thresholds
	// determine the set of thresholds whose stats have been updated since the last sync
	thresholds = thresholdsUpdatedStats(thresholds, observations, m.lastObservations)
	m.lastObservations = observations
	for _, t := range thresholds {
		m.cfg.Log.WithField("threshold", formatThreshold(t)).Debug("eviction manager: threshold met")
	}
	return thresholds
}

func (m *Manager) evictPod(pod *v1.Pod, gracePeriodOverride int64, evictMsg string, annotations map[string]string, condition *v1.PodCondition) bool {
	log := m.cfg.Log.WithField("pod", pod.Namespace+"/"+pod.Name)
	// If the pod is marked as critical and static, and support for critical pod annotations is enabled,
	// do not evict such pods. Static pods are not re-admitted after evictions.
	// https://github.com/kubernetes/kubernetes/issues/40573 has more details.
	if isCriticalPod(pod) {
		log.Error("eviction manager: cannot evict a critical pod")
		return false
	}
	// record that we are evicting the pod
	m.cfg.Recorder.AnnotatedEventf(pod, annotations, v1.EventTypeWarning, Reason, "%s", evictMsg)
	// this is a blocking call and should only return when the pod and its containers are killed.
	log.WithField("message", evictMsg).Info("evicting pod")
	err := m.cfg.KillPod(pod, true, &gracePeriodOverride, func(status *v1.PodStatus) {
		status.Phase = v1.PodFailed
		status.Reason = Reason
		status.Message = evictMsg
		if condition != nil {
			podutil.UpdatePodCondition(status, condition)
		}
	})
	if err != nil {
		log.WithError(err).Error("eviction manager: pod failed to evict")
	} else {
		log.Info("eviction manager: pod is evicted successfully")
	}
	return true
}

// isCriticalPod is the kubelet's types.IsCriticalPod: static and mirror
// pods, and pods of a system-critical priority.
func isCriticalPod(pod *v1.Pod) bool {
	if podconfig.IsStatic(pod) || podconfig.IsMirror(pod) {
		return true
	}
	return pod.Spec.Priority != nil && *pod.Spec.Priority >= systemCriticalPriority
}

func sameConditions(a, b []v1.NodeConditionType) bool {
	if len(a) != len(b) {
		return false
	}
	for _, c := range a {
		if !hasNodeCondition(b, c) {
			return false
		}
	}
	return true
}

func podNames(pods []*v1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Namespace + "/" + p.Name
	}
	return out
}
