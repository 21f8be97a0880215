package syncloop

import (
	"github.com/runlet/runlet/internal/podconfig"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// MirrorPods keeps the apiserver's mirror pods in step with the static pods
// (internal/mirror implements it). Sync must not block: the manager makes
// its API calls on its own goroutine.
type MirrorPods interface {
	Sync(static, terminating []*v1.Pod, sourcesReady bool)
}

// syncMirrors hands the static pods to the mirror manager every housekeeping
// period: those the sources hold, and those removed whose worker is still
// stopping them, whose mirror stays until then as on the kubelet. Creation
// does not wait for sources-ready (the kubelet creates mirrors in syncPod);
// orphan deletion does.
func (l *Loop) syncMirrors(sourcesReady bool) {
	if l.cfg.Mirror == nil {
		return
	}
	var static []*v1.Pod
	desired := map[types.UID]bool{}
	for _, p := range l.pods.list() {
		desired[p.UID] = true
		if podconfig.IsStatic(p) {
			static = append(static, p)
		}
	}
	l.cfg.Mirror.Sync(static, l.workers.terminatingStatic(desired), sourcesReady)
}

// terminatingStatic lists static pods no source holds whose worker has not
// finished stopping them.
func (w *podWorkers) terminatingStatic(desired map[types.UID]bool) []*v1.Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*v1.Pod
	for uid, pw := range w.work {
		if !desired[uid] && !pw.finished && pw.pod != nil && podconfig.IsStatic(pw.pod) {
			out = append(out, pw.pod)
		}
	}
	return out
}
