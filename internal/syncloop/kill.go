package syncloop

import (
	"context"
	"errors"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// KillPodOptions are the kubelet's KillPodOptions, for a pod the node ends
// on its own while it stays in its source (an eviction, a deadline).
type KillPodOptions struct {
	// GracePeriodOverride, if set, replaces the pod's grace period.
	GracePeriodOverride *int64
	// StatusFunc, if set, amends the pod's status once its containers have
	// stopped (phase, reason, message, conditions), from then on. Until
	// then the pod shows what runs: the kubelet's status manager, too,
	// holds a terminal phase back while containers may run.
	StatusFunc func(*v1.PodStatus)
}

// KillPod stops the pod's containers and reports its final status through
// opts.StatusFunc, as the kubelet's killPodNow does. It returns once the
// containers have stopped, or fails (with an ExceededGracePeriod event)
// after the kubelet's timeout: one and a half grace periods, at least 10 s.
// The pod is not started again: it stays as it ended until its source
// deletes it.
func (l *Loop) KillPod(ctx context.Context, pod *v1.Pod, opts KillPodOptions) error {
	grace := int64(0)
	if opts.GracePeriodOverride != nil {
		grace = *opts.GracePeriodOverride
	} else if pod.Spec.TerminationGracePeriodSeconds != nil {
		grace = *pod.Spec.TerminationGracePeriodSeconds
	}
	ctx, cancel := context.WithTimeout(ctx, time.Duration(max(grace+grace/2, 10))*time.Second)
	defer cancel()
	err := l.killPod(ctx, pod, opts)
	if errors.Is(err, context.DeadlineExceeded) {
		if l.cfg.Recorder != nil {
			l.cfg.Recorder.Eventf(pod, v1.EventTypeWarning, "ExceededGracePeriod", "Container runtime did not kill the pod within specified grace period.")
		}
		return fmt.Errorf("timeout waiting to kill pod")
	}
	return err
}

func (l *Loop) killPod(ctx context.Context, pod *v1.Pod, opts KillPodOptions) error {
	select {
	case <-l.started:
	case <-ctx.Done():
		return ctx.Err()
	}
	if opts.StatusFunc != nil {
		l.statusFuncs.Store(pod.UID, opts.StatusFunc)
	}
	done := l.workers.terminate(pod, opts.GracePeriodOverride)
	if done == nil {
		return fmt.Errorf("pod %s/%s is not run by this node", pod.Namespace, pod.Name)
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ActivePods lists the admitted pods whose containers may still run: what
// the node is still running or stopping (the kubelet's GetActivePods). A pod
// whose containers stopped for good is left out even while its clean-up
// goes on (see otherActivePods).
func (l *Loop) ActivePods() []*v1.Pod {
	select {
	case <-l.started:
	default:
		return nil
	}
	var out []*v1.Pod
	for _, p := range l.pods.list() {
		if l.workers.known(p.UID) && !l.workers.isTerminated(p.UID) {
			out = append(out, p)
		}
	}
	return out
}

// PodCleanedUp reports a pod whose worker has finished it: its containers
// stopped and what it held on the node (its volumes) released.
func (l *Loop) PodCleanedUp(uid types.UID) bool {
	select {
	case <-l.started:
	default:
		return false
	}
	return l.workers.isFinished(uid)
}

// applyStatusFunc amends a status generated once the pod's containers have
// stopped with what KillPod was given.
func (l *Loop) applyStatusFunc(uid types.UID, st *v1.PodStatus, terminal bool) {
	if !terminal {
		return
	}
	if fn, ok := l.statusFuncs.Load(uid); ok {
		fn.(func(*v1.PodStatus))(st)
	}
}
