package status

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/util/retry"
)

// APIWriter writes to the apiserver what the framework does not, as the
// kubelet's status manager does: the statuses of pods already terminal
// there, and the final delete of a pod that finished terminating.
type APIWriter struct {
	Pods corev1client.PodsGetter
}

// WriteStatus implements StatusWriter.
func (w APIWriter) WriteStatus(ctx context.Context, pod *v1.Pod) error {
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		return w.writeStatus(ctx, pod)
	})
	if err != nil {
		return fmt.Errorf("status of %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

func (w APIWriter) writeStatus(ctx context.Context, pod *v1.Pod) error {
	pods := w.Pods.Pods(pod.Namespace)
	cur, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		return apiErr(err)
	}
	if cur.UID != pod.UID {
		return ErrPodGone
	}
	next := cur.DeepCopy()
	next.Status = *pod.Status.DeepCopy()
	KeepForeignConditions(&next.Status, cur.Status.Conditions)
	if isTerminal(cur.Status.Phase) {
		// A terminal phase in the API is final; the containers' states are not.
		next.Status.Phase, next.Status.Reason, next.Status.Message = cur.Status.Phase, cur.Status.Reason, cur.Status.Message
	}
	if apiequality.Semantic.DeepEqual(cur.Status, next.Status) {
		return nil
	}
	_, err = pods.UpdateStatus(ctx, next, metav1.UpdateOptions{})
	return apiErr(err)
}

// DeletePod implements StatusWriter: the pod's final status first, so that
// controllers see how it ended, then a delete with grace 0 and the pod's UID
// as precondition, so a new pod of the same name is never hit.
func (w APIWriter) DeletePod(ctx context.Context, pod *v1.Pod) error {
	if err := w.WriteStatus(ctx, pod); err != nil {
		return err
	}
	zero := int64(0)
	err := w.Pods.Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
		GracePeriodSeconds: &zero,
		Preconditions:      metav1.NewUIDPreconditions(string(pod.UID)),
	})
	if apierrors.IsConflict(err) {
		return ErrPodGone // the UID precondition failed: another pod took the name
	}
	if err = apiErr(err); err != nil {
		return fmt.Errorf("delete %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// apiErr turns NotFound into ErrPodGone; conflicts stay, to be retried.
func apiErr(err error) error {
	if apierrors.IsNotFound(err) {
		return ErrPodGone
	}
	return err
}
