package volume

import (
	"context"
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// pvcProtectionFinalizer keeps a claim that pods use from going away.
const pvcProtectionFinalizer = "kubernetes.io/pvc-protection"

// setUpClaim resolves a persistentVolumeClaim to its bound volume, as the
// kubelet's desired state populator does, and sets that up: a hostPath or a
// local persistentVolume. A claim that is not bound yet fails (the pod waits
// and is retried).
func (m *Manager) setUpClaim(ctx context.Context, pod *v1.Pod, src *v1.PersistentVolumeClaimVolumeSource, args mountArgs) (*mounted, error) {
	pv, err := m.boundVolume(ctx, pod.Namespace, src.ClaimName)
	if err != nil {
		return nil, fmt.Errorf("error processing PVC %s/%s: %v", pod.Namespace, src.ClaimName, err)
	}
	readOnly := src.ReadOnly
	switch {
	case pv.Spec.HostPath != nil:
		return &mounted{path: pv.Spec.HostPath.Path, readOnly: readOnly}, setUpHostPath(pv.Spec.HostPath)
	case pv.Spec.Local != nil:
		path := pv.Spec.Local.Path
		if _, err := fileType(path); err != nil {
			return nil, fmt.Errorf("local volume %s: %w", pv.Name, err)
		}
		if !readOnly {
			if err := changePermissions(path, args.fsGroup, args.policy, false); err != nil {
				return nil, err
			}
		}
		return &mounted{path: path, readOnly: readOnly, relabel: true}, nil
	}
	return nil, fmt.Errorf("persistentVolume %s: %w", pv.Name, unsupported(&pv.Spec.PersistentVolumeSource))
}

// boundVolume is the persistentVolume a claim is bound to.
func (m *Manager) boundVolume(ctx context.Context, ns, claim string) (*v1.PersistentVolume, error) {
	if m.cfg.Client == nil {
		return nil, errors.New("no API server to read the claim from")
	}
	pvc, err := m.cfg.Client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("failed to fetch PVC from API server: %v", err)
	}
	if pvc.DeletionTimestamp != nil && !slices.Contains(pvc.Finalizers, pvcProtectionFinalizer) {
		return nil, errors.New("PVC is being deleted")
	}
	if pvc.Status.Phase != v1.ClaimBound {
		return nil, errors.New("PVC is not bound")
	}
	if pvc.Spec.VolumeName == "" {
		return nil, errors.New("PVC has empty pvc.Spec.VolumeName")
	}
	pv, err := m.cfg.Client.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("failed to fetch PV %s from API server: %v", pvc.Spec.VolumeName, err)
	}
	if pv.Spec.ClaimRef == nil {
		return nil, fmt.Errorf("found PV object %s but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim", pv.Name)
	}
	if pv.Spec.ClaimRef.UID != pvc.UID {
		return nil, fmt.Errorf("found PV object %s but its pv.Spec.ClaimRef.UID %s does not point to claim.UID %s", pv.Name, pv.Spec.ClaimRef.UID, pvc.UID)
	}
	return pv, nil
}
