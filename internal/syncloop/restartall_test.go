package syncloop

import (
	"context"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/polltest"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runtimefake"
	"github.com/runlet/runlet/internal/status"
	v1 "k8s.io/api/core/v1"
)

// TestRestartAllContainers: a container that exits by a RestartAllContainers
// rule restarts the whole pod in place, as the v1.37 kubelet does: every
// container is removed, the init containers run again before the regular
// ones, the statuses count a restart for each container and keep a last
// state, the pod never fails (restartPolicy Never), and the restart happens
// once.
func TestRestartAllContainers(t *testing.T) {
	held := &heldRemovals{release: make(chan struct{})}
	e := newLoopEnv(t, envOptions{apiOnly: true, backend: func(f *runtimefake.Fake) runtime.Runtime { held.Fake = f; return held }})
	never := v1.ContainerRestartPolicyNever
	pod := loopPod("ra")
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	pod.Spec.InitContainers = []v1.Container{{Name: "init", Image: "img:1"}}
	pod.Spec.Containers = []v1.Container{
		{Name: "source", Image: "img:1", RestartPolicy: &never, RestartPolicyRules: []v1.ContainerRestartRule{{
			Action:    v1.ContainerRestartRuleActionRestartAllContainers,
			ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}},
		}}},
		{Name: "regular", Image: "img:1"},
	}
	e.api <- []*v1.Pod{pod}
	runInit := func() string {
		var id string
		polltest.Eventually(t, 10*time.Second, "init running", func() bool {
			c := e.newest("ra", "init")
			id = c.ID
			return c.State == runtime.ContainerRunning
		})
		if err := e.f.Exit(id, 0); err != nil {
			t.Fatal(err)
		}
		polltest.Eventually(t, 10*time.Second, "source and regular running", func() bool {
			return e.newest("ra", "source").State == runtime.ContainerRunning && e.newest("ra", "regular").State == runtime.ContainerRunning
		})
		return id
	}
	firstInit := runInit()
	if err := e.f.Exit(e.newest("ra", "source").ID, 42); err != nil {
		t.Fatal(err)
	}
	// The status manager writes only a pod's newest status: the removals
	// wait until the API has been told that the restart began.
	polltest.Eventually(t, 10*time.Second, "AllContainersRestarting True in the API", func() bool {
		p := e.pod("ra")
		c := findCond(p.Status.Conditions, v1.AllContainersRestarting)
		return c != nil && c.Status == v1.ConditionTrue
	})
	close(held.release)
	if secondInit := runInit(); secondInit == firstInit {
		t.Fatal("the init container did not run again")
	}
	polltest.Eventually(t, 10*time.Second, "every container restarted once, with a last state", func() bool {
		p := e.pod("ra")
		if p == nil || len(p.Status.ContainerStatuses) != 2 || len(p.Status.InitContainerStatuses) != 1 {
			return false
		}
		for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			if cs.RestartCount != 1 || cs.LastTerminationState.Terminated == nil {
				return false
			}
		}
		return true
	})
	var sawTrue bool
	for _, st := range e.statuses("ra") {
		if st.Phase == v1.PodFailed || st.Phase == v1.PodSucceeded {
			t.Fatalf("pod went %s during the restart", st.Phase)
		}
		if c := findCond(st.Conditions, v1.AllContainersRestarting); c != nil && c.Status == v1.ConditionTrue {
			sawTrue = true
		}
		for _, cs := range st.ContainerStatuses {
			if w := cs.State.Waiting; w != nil && w.Reason == status.ReasonRestartingAllContainers && cs.RestartCount != 1 {
				t.Errorf("%s removed for the restart counts %d restarts; want 1", cs.Name, cs.RestartCount)
			}
		}
	}
	if !sawTrue {
		t.Error("no status said AllContainersRestarting True")
	}
	p := e.pod("ra")
	if c := findCond(p.Status.Conditions, v1.AllContainersRestarting); c == nil || c.Status != v1.ConditionFalse {
		t.Errorf("AllContainersRestarting = %+v; want False once restarted", c)
	}
	if p.Status.Phase != v1.PodRunning {
		t.Errorf("phase %s; want Running", p.Status.Phase)
	}
	// No second restart: the source's old exit is not taken for a new one.
	time.Sleep(500 * time.Millisecond)
	if n := e.f.Calls("CreateContainer"); n != 6 {
		t.Errorf("%d containers created; want 6, each of the three twice", n)
	}
}

// newest is the pod's newest container of that name in the fake backend.
func (e *loopEnv) newest(uid, name string) runtime.Container {
	var out runtime.Container
	for _, c := range e.f.Containers() {
		if c.PodUID == uid && c.Name == name && (out.ID == "" || c.CreatedAt.After(out.CreatedAt)) {
			out = c
		}
	}
	return out
}

func findCond(conds []v1.PodCondition, t v1.PodConditionType) *v1.PodCondition {
	for i := range conds {
		if conds[i].Type == t {
			return &conds[i]
		}
	}
	return nil
}

// heldRemovals is a backend whose container removals wait until released.
type heldRemovals struct {
	*runtimefake.Fake
	release chan struct{}
}

func (h *heldRemovals) RemoveContainer(ctx context.Context, id string) error {
	select {
	case <-h.release:
	case <-ctx.Done():
		return ctx.Err()
	}
	return h.Fake.RemoveContainer(ctx, id)
}
