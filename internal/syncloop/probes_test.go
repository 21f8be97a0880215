package syncloop

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/polltest"
	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestLoopProbes wires the real prober into the loop over the fake backend:
// readiness drives Ready through the probe channel, and a liveness failure
// restarts the container.
func TestLoopProbes(t *testing.T) {
	e := newLoopEnv(t, envOptions{apiOnly: true, probes: true})
	f, sm := e.f, e.sm
	var mu sync.Mutex
	healthy := map[string]bool{"live": true}
	f.HandleExec(func(_ context.Context, _ string, cmd []string, _ runtime.StreamIO) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		if healthy[cmd[0]] {
			return 0, nil
		}
		return 1, nil
	})
	set := func(probe string, ok bool) { mu.Lock(); healthy[probe] = ok; mu.Unlock() }

	probe := func(cmd string) *v1.Probe {
		return &v1.Probe{ProbeHandler: v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{cmd}}},
			PeriodSeconds: 1, TimeoutSeconds: 1, FailureThreshold: 1, SuccessThreshold: 1}
	}
	grace := int64(1)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: "uid", Name: "p", Namespace: "ns"},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, TerminationGracePeriodSeconds: &grace,
			Containers: []v1.Container{{Name: "c", Image: "img:1", ReadinessProbe: probe("ready"), LivenessProbe: probe("live")}}}}
	e.api <- []*v1.Pod{pod}

	cond := func(want v1.ConditionStatus) func() bool {
		return func() bool {
			st, ok := sm.PodStatus("uid")
			return ok && st.Phase == v1.PodRunning && condition(st, v1.PodReady) == want
		}
	}
	polltest.Eventually(t, 10*time.Second, "running and unready", cond(v1.ConditionFalse))
	set("ready", true)
	polltest.Eventually(t, 10*time.Second, "ready", cond(v1.ConditionTrue))
	set("ready", false)
	polltest.Eventually(t, 10*time.Second, "unready again", cond(v1.ConditionFalse))

	set("live", false)
	polltest.Eventually(t, 10*time.Second, "a restart after the liveness failure", func() bool {
		st, ok := sm.PodStatus("uid")
		return ok && len(st.ContainerStatuses) == 1 && st.ContainerStatuses[0].RestartCount >= 1
	})
	if len(f.Stops()) == 0 {
		t.Fatal("the unhealthy container was not stopped")
	}
}

func condition(st v1.PodStatus, typ v1.PodConditionType) v1.ConditionStatus {
	for _, c := range st.Conditions {
		if c.Type == typ {
			return c.Status
		}
	}
	return ""
}
