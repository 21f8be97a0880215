package nodeshutdown

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
)

// poll is how often the shutdown looks again for the node's pod sources
// read, or a group's pods cleaned up: the loop has no signal for either.
// Real time, while the clock times the grace periods.
const poll = 100 * time.Millisecond

// killPods stops the pods group by group, lowest priority first; a group
// without pods is skipped, as the kubelet's killPods.
func (m *Manager) killPods(ctx context.Context, pods []*v1.Pod) {
	for _, g := range groupByPriority(m.cfg.Periods, pods) {
		if ctx.Err() != nil {
			return
		}
		if len(g.pods) > 0 {
			m.killGroup(ctx, g)
		}
	}
}

// killGroup stops a group's pods at once and waits until they have stopped
// and released their volumes, or the group's grace period ends: then the
// next group starts while these kills go on.
func (m *Manager) killGroup(ctx context.Context, g group) {
	log := m.cfg.Log.WithField("priority", g.Priority).WithField("gracePeriod", g.ShutdownGracePeriodSeconds)
	waitCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for _, pod := range g.pods {
			wg.Add(1)
			go func() {
				defer wg.Done()
				m.kill(ctx, pod, g.ShutdownGracePeriodSeconds)
			}()
		}
		wg.Wait()
		m.waitCleanedUp(waitCtx, g.pods)
	}()
	timer := m.cfg.Clock.NewTimer(time.Duration(g.ShutdownGracePeriodSeconds) * time.Second)
	defer timer.Stop()
	select {
	case <-done:
		log.Info("node shutdown: group stopped")
	case <-timer.C():
		log.Warn("node shutdown: group's grace period ended before its pods stopped")
	case <-ctx.Done():
	}
}

// kill stops one pod within the group's grace period, or the pod's own
// if that is shorter.
func (m *Manager) kill(ctx context.Context, pod *v1.Pod, groupGrace int64) {
	grace := groupGrace
	if t := pod.Spec.TerminationGracePeriodSeconds; t != nil && *t <= grace {
		grace = *t
	}
	log := m.cfg.Log.WithField("pod", pod.Namespace+"/"+pod.Name).WithField("gracePeriod", grace)
	log.Info("node shutdown: stopping pod")
	generation := pod.Generation
	err := m.cfg.KillPod(ctx, pod, grace, func(st *v1.PodStatus) { markShutdown(st, generation) })
	if err != nil {
		log.WithError(err).Warn("node shutdown: pod did not stop")
	}
}

// waitCleanedUp returns once every pod's volumes are released, or ctx ends.
func (m *Manager) waitCleanedUp(ctx context.Context, pods []*v1.Pod) {
	for {
		left := false
		for _, p := range pods {
			if !m.cfg.PodCleanedUp(p) {
				left = true
				break
			}
		}
		if !left {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(poll):
		}
	}
}
