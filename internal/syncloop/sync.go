package syncloop

import (
	"context"
	"errors"
	"time"

	"github.com/runlet/runlet/internal/kuberuntime"
	"github.com/runlet/runlet/internal/podconfig"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/status"
	"github.com/runlet/runlet/internal/telemetry"
	v1 "k8s.io/api/core/v1"
)

// SyncPod reports the pod's status from the newest backend view, then
// drives the backend toward the spec.
func (l *Loop) SyncPod(ctx context.Context, pod *v1.Pod, since time.Time) (bool, time.Duration, error) {
	ctx, span := telemetry.StartPodSpan(telemetry.TakePodTrace(ctx, pod.UID), "syncloop.SyncPod", pod)
	defer span.End()
	pod = l.allocated(pod)
	if l.cfg.Prober != nil {
		l.cfg.Prober.AddPod(pod)
	}
	ps := l.cfg.Cache.GetNewerThan(string(pod.UID), since, ctx.Done())
	l.trackResize(pod, ps)
	l.setStatus(pod, ps, false)
	if l.deadlineExceeded(pod) {
		return true, 0, nil
	}
	res, err := l.cfg.Runtime.SyncPod(ctx, l.withLastStatus(pod), ps)
	if res.Changed {
		l.changed.Store(pod.UID, true)
	}
	if errors.Is(err, kuberuntime.ErrBackOff) {
		l.setStatus(pod, ps, false)
		return false, res.RequeueAfter, nil
	}
	if err != nil {
		telemetry.RecordError(span, err)
		l.resizeFailed(pod, err)
		if ctx.Err() == nil { // not merely cut short by the pod's deletion
			l.log.WithError(err).WithField("pod", pod.Namespace+"/"+pod.Name).Warn("sync failed")
		}
		l.setStatus(pod, ps, false)
	}
	if err == nil && l.trackResize(pod, ps) {
		// Resized in place: nothing the PLEG sees changed, so the status
		// says it now.
		l.setStatus(pod, ps, false)
	}
	if res.Terminal {
		l.setStatus(pod, ps, true)
	}
	return res.Terminal, res.RequeueAfter, err
}

// SyncTerminatingPod stops every container with the grace period and reports
// the final status.
func (l *Loop) SyncTerminatingPod(ctx context.Context, pod *v1.Pod, since time.Time, grace *int64) error {
	ctx, span := telemetry.StartPodSpan(telemetry.TakePodTrace(ctx, pod.UID), "syncloop.SyncTerminatingPod", pod)
	defer span.End()
	ps := l.cfg.Cache.Get(string(pod.UID))
	if _, desired := l.pods.get(pod.UID); desired {
		// The pod is still in the API: act on a view newer than the last
		// sync so a container it just started is stopped gracefully too.
		// A removed pod's leftovers go with its sandbox right after.
		ps = l.cfg.Cache.GetNewerThan(string(pod.UID), since, ctx.Done())
	}
	if l.cfg.Prober != nil {
		// A pod on its way out is not restarted; its readiness still counts.
		l.cfg.Prober.StopLivenessAndStartup(pod)
	}
	if err := l.cfg.Runtime.KillPod(ctx, pod, ps, grace); err != nil {
		telemetry.RecordError(span, err)
		return err
	}
	if l.cfg.Prober != nil {
		l.cfg.Prober.RemovePod(pod)
	}
	// Re-inspect only this pod's containers for the final status: a full
	// relist costs a second with a hundred pods on a busy podman.
	l.setStatus(pod, l.cfg.PLEG.Refresh(ctx, ps), true)
	l.changed.Store(pod.UID, true)
	return nil
}

// SyncTerminatedPod cleans up after a pod whose containers all stopped. The
// containers of a finished pod stay for its logs until the pod is deleted;
// its volumes go at once, as on the kubelet.
func (l *Loop) SyncTerminatedPod(ctx context.Context, pod *v1.Pod, since time.Time) error {
	// Every container has stopped: the status is generated once more from
	// the backend, as the kubelet's syncTerminatedPod does, so that it
	// shows the ends (and the reasons, such as DeadlineExceeded, that come
	// with a terminal phase) even when the kill's last look was too early.
	// Then it is final (the kubelet's TerminatePod), terminal even for a pod
	// whose containers never started.
	if ps := l.cfg.Cache.Get(string(pod.UID)); ps != nil {
		l.setStatus(pod, l.cfg.PLEG.Refresh(ctx, ps), true)
	}
	l.cfg.Status.TerminatePod(pod)
	_, desired := l.pods.get(pod.UID)
	if pod.DeletionTimestamp == nil && desired {
		return l.tearDownVolumes(pod.UID)
	}
	ps := l.cfg.Cache.Get(string(pod.UID))
	if err := l.cfg.Runtime.RemovePod(ctx, ps); err != nil {
		return err
	}
	l.changed.Store(pod.UID, true)
	if err := l.tearDownVolumes(pod.UID); err != nil {
		return err
	}
	if !podconfig.IsStatic(pod) {
		l.cfg.Status.PodTerminated(pod)
	}
	return nil
}

func (l *Loop) setStatus(pod *v1.Pod, ps *runtime.PodStatus, terminal bool) {
	in := status.Input{
		Pod:         l.allocated(pod),
		Runtime:     ps,
		Waiting:     l.cfg.Runtime.Waiting(string(pod.UID)),
		RuntimeName: l.cfg.Runtime.RuntimeName(),
		HostIPs:     l.cfg.HostIPs,
		Terminal:    terminal,
		Messages:    l.cfg.Runtime.TerminationMessages(pod, ps),
		Probes:      l.probes(),
		Old:         l.lastStatus(pod),
	}
	if a := l.cfg.Allocation; a != nil {
		in.Actuated = func(name string) (v1.ResourceRequirements, bool) { return a.Actuated(pod.UID, name) }
		allocated := in.Pod
		in.PodInForce = func() *v1.ResourceRequirements { return l.cfg.Runtime.PodInForce(allocated) }
		in.ResizeConditions = a.Conditions(pod.UID)
	}
	st := status.Generate(in)
	l.applyDeadline(pod, &st)
	l.applyStatusFunc(pod.UID, &st, terminal)
	l.cfg.Status.DelayTerminal(pod, &st, ps)
	l.cfg.Status.SetPodStatus(pod, st)
}

// lastStatus is the status runlet last generated for the pod, else the
// pod's own (the API's, after a restart of runlet): the record of
// containers the backend lost.
func (l *Loop) lastStatus(pod *v1.Pod) *v1.PodStatus {
	if st, ok := l.cfg.Status.PodStatus(pod.UID); ok {
		return &st
	}
	return &pod.Status
}

// withLastStatus is the pod with lastStatus as its status, for the backend's
// sync to find the restart counts and exits of containers the backend lost.
func (l *Loop) withLastStatus(pod *v1.Pod) *v1.Pod {
	p := *pod
	p.Status = *l.lastStatus(pod)
	return &p
}
