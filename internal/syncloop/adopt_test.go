package syncloop

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

// TestWorkerFinishedPodNeverSyncs: a pod the API already holds as ended
// (taken on after a restart of runlet) is only stopped and cleaned up; its
// containers are never started again, whatever its restart policy.
func TestWorkerFinishedPodNeverSyncs(t *testing.T) {
	s := &fakeSyncer{}
	w, _ := newWorkers(t, s)
	p := wpod("1")
	p.Spec.RestartPolicy = v1.RestartPolicyAlways
	p.Status.Phase = v1.PodFailed
	w.UpdatePod(p, SyncPodCreate, nil)
	expectCalls(t, s, "Terminating@1", "Terminated@1")
	eventually(t, "finished", func() bool { return w.isFinished("uid") })
}
