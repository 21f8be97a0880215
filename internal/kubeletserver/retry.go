package kubeletserver

import (
	"context"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
)

// reviewBackoff is the apiserver's DefaultAuthWebhookRetryBackoff, which the
// kubelet's TokenReview and SubjectAccessReview calls use.
var reviewBackoff = wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}

// withRetry calls create until it succeeds, fails for good or the backoff
// runs out, and returns its last error.
func withRetry(ctx context.Context, create func(context.Context) error) error {
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, reviewBackoff, func(ctx context.Context) (bool, error) {
		last = create(ctx)
		if last != nil && transient(last) {
			return false, nil
		}
		return true, last
	})
	if last != nil {
		return last
	}
	return err
}

// transient is the apiserver webhook's DefaultShouldRetry: errors a second
// try can get past.
func transient(err error) bool {
	if utilnet.IsConnectionReset(err) || utilnet.IsHTTP2ConnectionLost(err) ||
		apierrors.IsInternalError(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) {
		return true
	}
	_, retry := apierrors.SuggestsClientDelay(err)
	return retry
}
