package syncloop

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/runlet/runlet/internal/kuberuntime"
	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// The kubelet's resize events.
const (
	eventResizeStarted    = "ResizeStarted"
	eventResizeCompleted  = "ResizeCompleted"
	eventResizeDeferred   = "ResizeDeferred"
	eventResizeInfeasible = "ResizeInfeasible"
	eventResizeError      = "ResizeError"
)

// allocated is the pod as the node runs it: its containers' resources as
// allocated, which differ from its spec while a resize waits.
func (l *Loop) allocated(p *v1.Pod) *v1.Pod {
	if l.cfg.Allocation == nil {
		return p
	}
	return l.cfg.Allocation.Allocated(p)
}

// admitAllocation grants a newly admitted pod what its spec asks for; a pod
// known before a restart of runlet keeps its grant, and a spec that asks for
// more since is a resize.
func (l *Loop) admitAllocation(p *v1.Pod) {
	if l.cfg.Allocation == nil {
		return
	}
	if err := l.cfg.Allocation.Admit(p); err != nil {
		l.log.WithError(err).WithField("pod", p.Namespace+"/"+p.Name).Warn("recording the pod's resources failed")
	}
	l.handleResize(p)
}

// handleResize decides on a pod whose spec asks for other resources than
// it was allocated, as the kubelet's allocation manager: accepted when the
// pod fits the node with the others' allocations, else pending, Deferred
// (it may fit later) or Infeasible (it could not fit an empty node).
func (l *Loop) handleResize(p *v1.Pod) {
	a := l.cfg.Allocation
	if a == nil || p.DeletionTimestamp != nil || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
		return
	}
	if !a.ResizeRequested(p) {
		a.ClearPending(p.UID) // reverted to what it has
		return
	}
	if ok, reason, msg := l.resizeFits(p); !ok {
		if a.SetPending(p.UID, reason, msg, p.Generation) {
			event := map[string]string{v1.PodReasonInfeasible: eventResizeInfeasible}[reason]
			if event == "" {
				event = eventResizeDeferred
			}
			l.event(p, v1.EventTypeWarning, event, resizeMessage("Pod resize "+reason, p, p.Generation, msg))
		}
		return
	}
	if err := a.SetAllocated(p); err != nil {
		l.log.WithError(err).WithField("pod", p.Namespace+"/"+p.Name).Warn("recording the pod's resize failed")
		return
	}
	a.ClearPending(p.UID)
	a.SetInProgress(p.UID, "", "", p.Generation, true)
	l.event(p, v1.EventTypeNormal, eventResizeStarted, resizeMessage("Pod resize started", p, p.Generation, ""))
}

// resizeFits runs admission on the resized pod against the other pods'
// allocations, and against an empty node to tell Infeasible from Deferred.
func (l *Loop) resizeFits(p *v1.Pod) (bool, string, string) {
	if l.cfg.Admission == nil {
		return true, "", ""
	}
	if r := l.cfg.Admission.Admit(p, nil); !r.Admit {
		return false, v1.PodReasonInfeasible, r.Message
	}
	if r := l.cfg.Admission.Admit(p, l.otherActivePods(p.UID)); !r.Admit {
		return false, v1.PodReasonDeferred, r.Message
	}
	return true, "", ""
}

// retryPendingResizes tries waiting resizes again: another pod may have
// gone or shrunk.
func (l *Loop) retryPendingResizes() {
	if l.cfg.Allocation == nil {
		return
	}
	for _, uid := range l.cfg.Allocation.PendingPods() {
		if p, ok := l.pods.get(uid); ok {
			before := l.cfg.Allocation.Pending(uid)
			l.handleResize(p)
			if before != nil && l.cfg.Allocation.Pending(uid) == nil {
				l.workers.UpdatePod(p, SyncPodUpdate, nil)
			}
		}
	}
}

// trackResize sets PodResizeInProgress while a running container, or the
// pod's cgroup, lacks its allocation, and clears it with the kubelet's ResizeCompleted event once
// none does.
// It reports whether the condition went.
func (l *Loop) trackResize(pod *v1.Pod, ps *runtime.PodStatus) bool {
	a := l.cfg.Allocation
	if a == nil {
		return false
	}
	if l.cfg.Runtime.ResizeInProgress(pod, ps) {
		a.SetInProgress(pod.UID, "", "", pod.Generation, false)
		return false
	}
	gen, ok := a.ClearInProgress(pod.UID)
	if ok {
		l.event(pod, v1.EventTypeNormal, eventResizeCompleted, resizeMessage("Pod resize completed", pod, gen, ""))
	}
	return ok
}

// resizeFailed marks the resize stuck, with the reason Error and why.
func (l *Loop) resizeFailed(pod *v1.Pod, err error) {
	re := resizeError(err)
	if re == nil || l.cfg.Allocation == nil {
		return
	}
	if l.cfg.Allocation.SetInProgress(pod.UID, v1.PodReasonError, re.Error(), pod.Generation, false) {
		l.event(pod, v1.EventTypeWarning, eventResizeError, resizeMessage("Pod resize error", pod, pod.Generation, re.Error()))
	}
}

func resizeError(err error) *kuberuntime.ResizeError {
	var re *kuberuntime.ResizeError
	if errors.As(err, &re) {
		return re
	}
	var agg utilerrors.Aggregate
	if errors.As(err, &agg) {
		for _, e := range agg.Errors() {
			if errors.As(e, &re) {
				return re
			}
		}
	}
	return nil
}

func (l *Loop) event(p *v1.Pod, typ, reason, msg string) {
	if l.cfg.Recorder != nil {
		l.cfg.Recorder.Event(p, typ, reason, msg)
	}
}

// resizeMessage is the kubelet's resize event text: a prefix, then the
// containers' resources and the generation as JSON.
func resizeMessage(prefix string, p *v1.Pod, generation int64, errMsg string) string {
	type alloc struct {
		Name      string                  `json:"name"`
		Resources v1.ResourceRequirements `json:"resources,omitempty"`
	}
	summary := struct {
		InitContainers []alloc `json:"initContainers,omitempty"`
		Containers     []alloc `json:"containers,omitempty"`
		Generation     int64   `json:"generation"`
		Error          string  `json:"error,omitempty"`
	}{Generation: generation, Error: errMsg}
	for _, c := range p.Spec.InitContainers {
		summary.InitContainers = append(summary.InitContainers, alloc{c.Name, c.Resources})
	}
	for _, c := range p.Spec.Containers {
		summary.Containers = append(summary.Containers, alloc{c.Name, c.Resources})
	}
	b, err := json.Marshal(summary)
	if err != nil {
		return prefix
	}
	return fmt.Sprintf("%s: %s", prefix, b)
}
