package syncloop

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
)

// PodVolumes removes what pods leave on the node's disk (internal/volume).
type PodVolumes interface {
	// TearDownPod unmounts and removes the pod's volumes once its
	// containers are gone.
	TearDownPod(uid types.UID) error
	// CleanupPodDirs removes pods/<uid> of every pod keep says is gone,
	// calling release for it first.
	CleanupPodDirs(keep func(uid string) bool, release func(uid string)) error
	// ForgetObjects stops following the ConfigMaps and Secrets the pod
	// uses, once the pod has left the API.
	ForgetObjects(uid types.UID)
}

// tearDownVolumes runs once a pod's containers have stopped for good.
func (l *Loop) tearDownVolumes(uid types.UID) error {
	if l.cfg.Volumes == nil {
		return nil
	}
	return l.cfg.Volumes.TearDownPod(uid)
}

// cleanupPodDirs removes the directories of pods that no source holds, no
// worker is busy with and no backend object belongs to, as the kubelet's
// cleanupOrphanedPodDirs: also those of pods deleted while runlet was down.
// Before each goes, what the backend keeps for the pod beside its sandboxes
// does, as in the kubelet's cleanupOrphanedPodCgroups: a pod's directory is
// made before its first sandbox, so the pods that have one are all those
// this node may have left a cgroup of. It runs on the loop's goroutine,
// where pods are added, so a pod cannot appear while its directory is
// judged.
func (l *Loop) cleanupPodDirs(ctx context.Context) {
	if l.cfg.Volumes == nil {
		return
	}
	inBackend := map[string]bool{}
	for _, uid := range l.cfg.Cache.UIDs() {
		inBackend[uid] = true
	}
	keep := func(uid string) bool {
		_, desired := l.pods.get(types.UID(uid))
		return desired || l.workers.known(types.UID(uid)) || inBackend[uid]
	}
	release := func(uid string) {
		if err := l.cfg.Runtime.ReleasePod(ctx, uid); err != nil {
			l.log.WithError(err).WithField("podUID", uid).Warn("removing the pod cgroup of a pod that is gone failed")
		}
	}
	if err := l.cfg.Volumes.CleanupPodDirs(keep, release); err != nil {
		l.log.WithError(err).Warn("removing directories of pods that are gone failed")
	}
}
