package syncloop

import (
	"context"

	v1 "k8s.io/api/core/v1"
)

// runningStep is a pod worker's step in flight.
type runningStep struct {
	state  workState
	grace  int64 // the grace period it stops containers with, in seconds
	cancel context.CancelFunc
}

// cancelIfOutdated cancels the step when the pod's newest update makes it
// moot, as the kubelet's pod workers do: a sync of a pod that has started
// terminating (a postStart hook or a start must not hold up its deletion),
// or a termination whose grace period just shrank (a preStop hook sleeping
// past the new deadline must be cut). The worker then runs the pending
// update at once. Called with the workers' lock held.
func (s *runningStep) cancelIfOutdated(pw *podWork) {
	if s == nil {
		return
	}
	switch {
	case s.state == stateSync && pw.state == stateTerminating:
		s.cancel()
	case s.state == stateTerminating && effectiveGrace(pw.pod, pw.grace) < s.grace:
		s.cancel()
	}
}

// effectiveGrace is the grace period a termination of pod uses: an override
// (a forced or rejected kill), else the deletion's, else the spec's.
func effectiveGrace(pod *v1.Pod, override *int64) int64 {
	switch {
	case override != nil:
		return *override
	case pod.DeletionGracePeriodSeconds != nil:
		return *pod.DeletionGracePeriodSeconds
	case pod.Spec.TerminationGracePeriodSeconds != nil:
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return v1.DefaultTerminationGracePeriodSeconds
}
