package vknode

import (
	"context"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// UpdateStatus writes the pod's status on the informer's copy of the
// object. The framework sends the pod the provider last handed it, with the
// resourceVersion of the informer's copy, so any metadata changed since the
// provider's copy was made would be written back with it: a finalizer the
// Job controller removed, a label. The kubelet's status manager writes the
// status alone. Here the status goes onto the informer's copy, and the
// write is checked against that copy's resourceVersion.
func (p podClientIn) UpdateStatus(ctx context.Context, pod *v1.Pod, opts metav1.UpdateOptions) (*v1.Pod, error) {
	cur, err := p.c.pods.Pods(p.namespace).Get(pod.Name)
	if err != nil {
		return nil, err // NotFound: the pod is gone, which the framework ignores
	}
	if cur.UID != pod.UID {
		// Another pod took the name: the status is not its.
		return nil, apierrors.NewNotFound(v1.Resource("pods"), pod.Name)
	}
	next := cur.DeepCopy()
	next.Status = *pod.Status.DeepCopy()
	return p.PodInterface.UpdateStatus(ctx, next, opts)
}
