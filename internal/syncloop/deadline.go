package syncloop

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The kubelet's active deadline handler (pkg/kubelet/active_deadline.go).
const (
	deadlineReason  = "DeadlineExceeded"
	deadlineMessage = "Pod was active on the node longer than the specified deadline"
)

// pastActiveDeadline reports a pod active on the node for longer than its
// activeDeadlineSeconds, counted from its status' startTime.
func (l *Loop) pastActiveDeadline(pod *v1.Pod) bool {
	if pod.Spec.ActiveDeadlineSeconds == nil {
		return false
	}
	start := pod.Status.StartTime
	if p, ok := l.cfg.Status.GetPod(pod.UID); ok {
		start = p.Status.StartTime
	}
	if start.IsZero() {
		return false
	}
	return time.Since(start.Time) >= time.Duration(*pod.Spec.ActiveDeadlineSeconds)*time.Second
}

// applyDeadline fails the status of a pod past its deadline, as the
// kubelet's ShouldEvict does for every status it generates: the pod keeps
// this reason through the killing of its containers and after.
func (l *Loop) applyDeadline(pod *v1.Pod, st *v1.PodStatus) {
	if l.pastActiveDeadline(pod) {
		st.Phase, st.Reason, st.Message = v1.PodFailed, deadlineReason, deadlineMessage
	}
}

// deadlineExceeded ends a pod past its deadline: it is reported Failed, with
// an event, and its worker goes on to kill its containers.
func (l *Loop) deadlineExceeded(pod *v1.Pod) bool {
	if !l.pastActiveDeadline(pod) {
		return false
	}
	if l.cfg.Recorder != nil {
		l.cfg.Recorder.Eventf(pod, v1.EventTypeNormal, deadlineReason, deadlineMessage)
	}
	return true
}

// podsPastDeadline lists running pods past their deadline: the sync ticker
// syncs them (the kubelet's PodSyncLoopHandlers), so a deadline is enforced
// when it passes, or when it is shortened on a running pod, not at the next
// resync.
func (l *Loop) podsPastDeadline() []types.UID {
	var out []types.UID
	for _, p := range l.pods.list() {
		if p.Spec.ActiveDeadlineSeconds != nil && l.workers.syncing(p.UID) && l.pastActiveDeadline(p) {
			out = append(out, p.UID)
		}
	}
	return out
}
