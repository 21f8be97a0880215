package status

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/runlet/runlet/internal/podconfig"
	v1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/util/retry"
)

// APIWriter writes pods' statuses to the apiserver and deletes the pods
// that finished terminating, as the kubelet's status manager does.
type APIWriter struct {
	Pods corev1client.PodsGetter
	// Current is the API object a pod's status goes to (Target), from the
	// node's pod informer: a node may not read a pod that is no longer
	// bound to it (the Node authorizer refuses it), so a pod the informer no
	// longer holds is gone without a request.
	Current APIPod
	// Synced, if set, reports whether that informer has listed the node's
	// pods: until it has (runlet started while the apiserver does not
	// answer), a pod it does not hold is not known to be gone.
	Synced func() bool
}

// ErrNotListed says the node's pods have not been listed yet: whether the
// pod's API object is there is not known.
var ErrNotListed = errors.New("the node's pods are not listed yet")

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

// writeStatus patches the pod's status as the kubelet's PatchPodStatus
// does: a strategic merge patch from the status the node last saw to the
// new one, carrying the target's UID (a mirror pod's for a static pod), so
// that it never lands on another pod of the same name. The conditions
// others own are kept as the API holds them (mergePodStatus).
func (w APIWriter) writeStatus(ctx context.Context, pod *v1.Pod) error {
	cur, ok := w.Current(pod)
	if !ok && w.Synced != nil && !w.Synced() {
		return ErrNotListed
	}
	if !ok {
		return ErrPodGone
	}
	next := pod.Status.DeepCopy()
	keepForeign(next, &cur.Status)
	if isTerminal(cur.Status.Phase) && !podconfig.IsStatic(pod) {
		// An API pod's terminal phase is final; the containers' states are
		// not. A mirror pod's is not: a static pod keeps its UID when its
		// manifest comes back, and runs again.
		next.Phase, next.Reason, next.Message = cur.Status.Phase, cur.Status.Reason, cur.Status.Message
	}
	if apiequality.Semantic.DeepEqual(cur.Status, *next) {
		return nil
	}
	patch, err := statusPatch(cur.UID, cur.Status, *next)
	if err != nil {
		return err
	}
	_, err = w.Pods.Pods(cur.Namespace).Patch(ctx, cur.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	return apiErr(err)
}

// keepForeign puts into st what others own of the API's status cur, as the
// kubelet's mergePodStatus: their conditions and the resource claims'
// statuses.
func keepForeign(st, cur *v1.PodStatus) {
	KeepForeignConditions(st, cur.Conditions)
	st.ResourceClaimStatuses = cur.ResourceClaimStatuses
	st.ExtendedResourceClaimStatus = cur.ExtendedResourceClaimStatus
	st.NodeAllocatableResourceClaimStatuses = cur.NodeAllocatableResourceClaimStatuses
}

// statusPatch is the kubelet's preparePatchBytesForPodStatus.
func statusPatch(uid types.UID, old, new v1.PodStatus) ([]byte, error) {
	oldData, err := json.Marshal(v1.Pod{Status: old})
	if err != nil {
		return nil, err
	}
	newData, err := json.Marshal(v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: uid}, Status: new})
	if err != nil {
		return nil, err
	}
	return strategicpatch.CreateTwoWayMergePatch(oldData, newData, v1.Pod{})
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
