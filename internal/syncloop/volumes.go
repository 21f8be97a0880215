package syncloop

import (
	"k8s.io/apimachinery/pkg/types"
)

// PodVolumes removes what pods leave on the node's disk (internal/volume).
type PodVolumes interface {
	// TearDownPod unmounts and removes the pod's volumes once its
	// containers are gone.
	TearDownPod(uid types.UID) error
	// CleanupPodDirs removes pods/<uid> of every pod keep says is gone.
	CleanupPodDirs(keep func(uid string) bool) error
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
// It runs on the loop's goroutine, where pods are added, so a pod cannot
// appear while its directory is judged.
func (l *Loop) cleanupPodDirs() {
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
	if err := l.cfg.Volumes.CleanupPodDirs(keep); err != nil {
		l.log.WithError(err).Warn("removing directories of pods that are gone failed")
	}
}
