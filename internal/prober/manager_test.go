package prober

import (
	"context"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/polltest"
	"github.com/runlet/runlet/internal/prober/results"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

func sidecarPod() *v1.Pod {
	always := v1.ContainerRestartPolicyAlways
	pod := probePod(v1.Container{Name: "c", ReadinessProbe: execSpec(1), LivenessProbe: execSpec(1)})
	pod.Spec.InitContainers = []v1.Container{
		{Name: "init", ReadinessProbe: execSpec(1)}, // not a sidecar: never probed
		{Name: "side", RestartPolicy: &always, StartupProbe: execSpec(1)},
	}
	return pod
}

func TestManagerWorkersFollowThePod(t *testing.T) {
	h := newHarness(t)
	h.m.clock = clock.RealClock{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go h.m.Run(ctx)
	pod := sidecarPod()
	h.running(h.ids[0], time.Now(), true)

	h.m.AddPod(pod)
	h.m.AddPod(pod) // every sync adds the pod again: no second worker
	if n := h.m.WorkerCount(); n != 3 {
		t.Fatalf("%d workers, want 3 (readiness and liveness of c, startup of the sidecar)", n)
	}
	// The readiness result reaches Updates, tagged with its type.
	var u Update
	polltest.Eventually(t, 10*time.Second, "a readiness update", func() bool {
		select {
		case u = <-h.m.Updates():
			return u.Type == Readiness && u.Result == results.Success
		default:
			return false
		}
	})
	if u.PodUID != "uid" || u.ContainerID != h.ids[0] {
		t.Fatalf("update %+v", u)
	}

	h.m.StopLivenessAndStartup(pod)
	polltest.Eventually(t, 10*time.Second, "liveness and startup workers to stop", func() bool { return h.m.WorkerCount() == 1 })
	if _, ok := h.m.worker("uid", "c", Readiness); !ok {
		t.Fatal("readiness stopped with liveness: a terminating pod must still turn unready")
	}
	h.m.RemovePod(pod)
	polltest.Eventually(t, 10*time.Second, "every worker to stop", func() bool { return h.m.WorkerCount() == 0 })
	if _, ok := h.m.Readiness.Get(h.ids[0]); ok {
		t.Fatal("results outlived their worker")
	}

	h.m.AddPod(pod)
	h.m.CleanupPods(map[types.UID]bool{"other": true})
	polltest.Eventually(t, 10*time.Second, "workers of a pod no source holds to stop", func() bool { return h.m.WorkerCount() == 0 })
}

func TestManagerStartedAndReady(t *testing.T) {
	h := newHarness(t)
	plain := v1.Container{Name: "plain"}
	probed := v1.Container{Name: "c", ReadinessProbe: execSpec(1), StartupProbe: execSpec(1)}
	pod := probePod(probed)
	pod.Spec.Containers = append(pod.Spec.Containers, plain)
	now := h.clock.Now()

	if !h.m.Started(pod, &plain, "p1", now) || !h.m.Ready(pod, &plain, "p1", now) {
		t.Fatal("a container without probes is started and ready")
	}
	h.m.AddPod(pod)
	if h.m.Started(pod, &probed, "c1", now) || h.m.Ready(pod, &probed, "c1", now) {
		t.Fatal("started or ready before any probe ran")
	}
	h.m.Startup.Set("c1", results.Success, "uid")
	h.m.Readiness.Set("c1", results.Success, "uid")
	if !h.m.Started(pod, &probed, "c1", now) || !h.m.Ready(pod, &probed, "c1", now) {
		t.Fatal("not started and ready after both probes succeeded")
	}
	h.m.Readiness.Set("c1", results.Failure, "uid")
	if h.m.Ready(pod, &probed, "c1", now) {
		t.Fatal("ready after the readiness probe failed")
	}

	// A container that ran before runlet started keeps the API's word until
	// its probes have run.
	old := now.Add(-time.Hour)
	pod.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c", ContainerID: "podman://c0", Started: ptrTo(true)}}
	pod.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}
	if !h.m.Started(pod, &probed, "c0", old) || !h.m.Ready(pod, &probed, "c0", old) {
		t.Fatal("an adopted ready container turned unready on runlet's restart")
	}
	pod.Status.Conditions[0].Status = v1.ConditionFalse
	if h.m.Ready(pod, &probed, "c0", old) {
		t.Fatal("an adopted container of an unready pod turned ready")
	}
}

func ptrTo[T any](v T) *T { return &v }
