package vknode

import (
	"context"
	"errors"

	"github.com/virtual-kubelet/virtual-kubelet/node"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
)

// podClient is the pod client the pod controller gets. It differs from the
// API's in two calls, where the framework would do what the kubelet never
// does.
//
// Delete: the controller force-deletes a pod being deleted as soon as the
// API shows none of its containers running, and again once its grace period
// is over, whether or not the node has stopped the pod and written how it
// ended. On the kubelet only the status manager deletes a pod, after its
// final status. So a delete of a pod already marked for deletion is not
// sent: it is handed to the provider as the graceful delete it is, and
// runlet's status manager deletes the object once the pod has terminated.
//
// UpdateStatus: refused. runlet's status manager is the one writer of pods'
// statuses; the framework's would be a whole-object update of the
// provider's copy, metadata and all. Its notifier never calls back, so only
// a provider error could make it write, and the provider returns none.
//
// Every other call goes through.
type podClient struct {
	corev1client.PodsGetter
	pods     corev1listers.PodLister
	provider node.PodLifecycleHandler
}

func (c podClient) Pods(namespace string) corev1client.PodInterface {
	return podClientIn{PodInterface: c.PodsGetter.Pods(namespace), c: c, namespace: namespace}
}

type podClientIn struct {
	corev1client.PodInterface
	c         podClient
	namespace string
}

func (p podClientIn) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	pod, err := p.c.pods.Pods(p.namespace).Get(name)
	if err != nil {
		return err // NotFound: the pod is gone, as the framework wanted
	}
	if pre := opts.Preconditions; pre != nil && pre.UID != nil && *pre.UID != pod.UID {
		return apierrors.NewConflict(schema.GroupResource{Resource: "pods"}, name, errUIDChanged)
	}
	if pod.DeletionTimestamp == nil || isMirror(pod) {
		// A delete the provider asked for starts a graceful delete; a
		// mirror pod's is the mirror manager's business.
		return p.PodInterface.Delete(ctx, name, opts)
	}
	return p.c.provider.DeletePod(ctx, pod.DeepCopy())
}

var errUIDChanged = errors.New("the pod under this name has another UID")

func (p podClientIn) UpdateStatus(context.Context, *v1.Pod, metav1.UpdateOptions) (*v1.Pod, error) {
	return nil, errStatusWriter
}

var errStatusWriter = errors.New("pod statuses are written by runlet's status manager, not the framework")

func isMirror(pod *v1.Pod) bool {
	_, ok := pod.Annotations[v1.MirrorPodAnnotationKey]
	return ok
}
