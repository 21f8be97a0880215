package vknode

import (
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
)

// RaiseQueueLimits gives the pod controller's queues (pods from the API,
// deletions; its status queue stays empty, as runlet's status manager
// writes every status) a limiter that lets a new item through at once and
// backs off only after a failure. The framework's default
// allows 10 qps overall, which would queue a burst of pods.
func RaiseQueueLimits(c *node.PodControllerConfig) error {
	limiter := func() *queueLimiter { return newQueueLimiter(5*time.Millisecond, 30*time.Second, 500, 1000) }
	c.SyncPodsFromKubernetesRateLimiter = limiter()
	c.SyncPodStatusFromProviderRateLimiter = limiter()
	c.DeletePodsFromKubernetesRateLimiter = limiter()
	return nil
}

// queueLimiter is client-go's exponential failure limiter under an overall
// token bucket, except that an item's first turn is free. The framework's
// queues ask the limiter for every item they add, and the exponential
// limiter answers its base delay even for an item that never failed: each
// status, pod and deletion then waited that long before it was handled.
type queueLimiter struct {
	failures workqueue.TypedRateLimiter[any]
	overall  workqueue.TypedRateLimiter[any]
}

func newQueueLimiter(base, maxDelay time.Duration, qps float64, burst int) *queueLimiter {
	return &queueLimiter{
		failures: workqueue.NewTypedItemExponentialFailureRateLimiter[any](base, maxDelay),
		overall:  &workqueue.TypedBucketRateLimiter[any]{Limiter: rate.NewLimiter(rate.Limit(qps), burst)},
	}
}

// When is the delay before the item's turn: none for its first, base × 2^n
// after its nth failure, and never less than the overall bucket asks.
func (l *queueLimiter) When(item any) time.Duration {
	first := l.failures.NumRequeues(item) == 0
	backoff := l.failures.When(item)
	if first {
		backoff = 0
	}
	return max(backoff, l.overall.When(item))
}

// NumRequeues counts the item's turns since it was last forgotten.
func (l *queueLimiter) NumRequeues(item any) int { return l.failures.NumRequeues(item) }

// Forget starts the item afresh: the queues call it after a success.
func (l *queueLimiter) Forget(item any) {
	l.failures.Forget(item)
	l.overall.Forget(item)
}
