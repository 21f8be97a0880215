package mirror

import (
	"context"
	"errors"
	"fmt"

	"github.com/runlet/runlet/internal/podconfig"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// errNodeDeleting stops mirror creation on a node being removed, as the kubelet.
var errNodeDeleting = errors.New("node is being deleted")

// IsMirrorOf reports whether mirror stands for static: same namespace/name
// and the mirror annotation carries the static pod's config hash.
func IsMirrorOf(mirror, static *v1.Pod) bool {
	if mirror.Name != static.Name || mirror.Namespace != static.Namespace {
		return false
	}
	hash, ok := mirror.Annotations[podconfig.ConfigMirrorAnnotation]
	return ok && hash == static.Annotations[podconfig.ConfigHashAnnotation]
}

// mirrorPodFor builds the mirror of static: the same metadata and spec plus
// the mirror annotation and an ownerReference to the Node, which the
// NodeRestriction admission requires (and which lets the garbage collector
// remove mirrors of a deleted node).
func mirrorPodFor(static *v1.Pod, nodeName string, nodeUID types.UID) *v1.Pod {
	meta := static.ObjectMeta.DeepCopy()
	meta.UID, meta.ResourceVersion, meta.Generation = "", "", 0
	meta.CreationTimestamp, meta.DeletionTimestamp, meta.DeletionGracePeriodSeconds = metav1.Time{}, nil, nil
	meta.ManagedFields = nil
	if meta.Annotations == nil {
		meta.Annotations = map[string]string{}
	}
	meta.Annotations[podconfig.ConfigMirrorAnnotation] = static.Annotations[podconfig.ConfigHashAnnotation]
	controller := true
	meta.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: v1.SchemeGroupVersion.String(),
		Kind:       "Node",
		Name:       nodeName,
		UID:        nodeUID,
		Controller: &controller,
	}}
	return &v1.Pod{ObjectMeta: *meta, Spec: *static.Spec.DeepCopy()}
}

// createMirror is the kubelet's CreateMirrorPod. A mirror that already exists
// with the right hash (the informer had not caught up, e.g. at start-up) is
// success; created says whether this call made it.
func (m *Manager) createMirror(ctx context.Context, static *v1.Pod) (created bool, err error) {
	node, err := m.cfg.Client.CoreV1().Nodes().Get(ctx, m.cfg.NodeName, metav1.GetOptions{})
	if err != nil {
		return false, fmt.Errorf("failed to get node: %w", err)
	}
	if node.DeletionTimestamp != nil {
		return false, errNodeDeleting
	}
	if node.UID == "" {
		return false, fmt.Errorf("UID unset for node %s", m.cfg.NodeName)
	}
	pods := m.cfg.Client.CoreV1().Pods(static.Namespace)
	_, err = pods.Create(ctx, mirrorPodFor(static, m.cfg.NodeName, node.UID), metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		cur, gerr := pods.Get(ctx, static.Name, metav1.GetOptions{})
		if gerr == nil && cur.DeletionTimestamp == nil && IsMirrorOf(cur, static) {
			return false, nil
		}
	}
	return err == nil, err
}

// deleteMirror is the kubelet's DeleteMirrorPod: grace 0, only the object
// with uid. It reports whether it deleted; a pod already gone or replaced
// is not an error.
func (m *Manager) deleteMirror(ctx context.Context, namespace, name string, uid types.UID) bool {
	var grace int64
	err := m.cfg.Client.CoreV1().Pods(namespace).Delete(ctx, name, metav1.DeleteOptions{
		GracePeriodSeconds: &grace,
		Preconditions:      &metav1.Preconditions{UID: &uid},
	})
	if err != nil {
		if !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
			m.cfg.Log.WithError(err).WithField("pod", namespace+"/"+name).Warn("failed deleting a mirror pod")
		}
		return false
	}
	return true
}
