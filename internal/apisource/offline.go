package apisource

import (
	"context"
	"time"

	"k8s.io/client-go/tools/cache"
)

// waitForAPI waits until the informer has listed the node's pods. If
// OfflineAt comes first, the source runs the checkpoint's pods as its own
// until then, as if the API had listed them: the kubelet's static pods,
// made of the node's API pods. It reports false once ctx ends.
func (s *Source) waitForAPI(ctx context.Context) bool {
	synced := make(chan struct{})
	go func() {
		if cache.WaitForCacheSync(ctx.Done(), s.cfg.Pods.Synced) {
			close(synced)
		}
	}()
	var offline <-chan time.Time
	if s.cfg.Checkpoint != nil && !s.cfg.OfflineAt.IsZero() {
		t := time.NewTimer(time.Until(s.cfg.OfflineAt))
		defer t.Stop()
		offline = t.C
	}
	select {
	case <-ctx.Done():
		return false
	case <-synced:
		return true
	case <-offline:
	}
	return s.runOffline(ctx, synced)
}

// runOffline sends the checkpoint's pods until the API has listed its own.
func (s *Source) runOffline(ctx context.Context, synced <-chan struct{}) bool {
	pods := s.cfg.Checkpoint.Pods()
	if s.cfg.Log != nil {
		s.cfg.Log.WithField("pods", len(pods)).Warn("the apiserver has not answered: running the node's pods from its checkpoint until it does")
	}
	s.mu.Lock()
	for _, pod := range pods {
		if _, ok := s.set.pods[pod.UID]; !ok {
			s.set.pods[pod.UID] = pod
			s.set.restored[pod.UID] = true
		}
	}
	s.mu.Unlock()
	s.cfg.Checkpoint.SetOffline(true)
	snap := s.snapshot()
	select {
	case <-ctx.Done():
		return false
	case <-synced:
		return true
	case s.cfg.Updates <- snap:
	}
	select {
	case <-ctx.Done():
		return false
	case <-synced:
		return true
	}
}
