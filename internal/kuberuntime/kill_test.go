package kuberuntime

import (
	"fmt"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
)

func TestKillPodGrace(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	cases := []struct {
		name          string
		spec, deleted *int64
		override      *int64
		signalLost    bool
		want          time.Duration
	}{
		{"default", nil, nil, nil, false, 30 * time.Second},
		{"spec", i64(7), nil, nil, false, 7 * time.Second},
		{"deletion grace", i64(7), i64(3), nil, false, 3 * time.Second},
		{"override", i64(7), i64(3), i64(4), false, 4 * time.Second},
		// The kubelet's minimum: a forced deletion still gets SIGTERM first.
		{"override below the minimum", i64(7), i64(3), i64(1), false, 2 * time.Second},
		{"override zero", nil, nil, i64(0), false, 2 * time.Second},
		// ...unless the kernel drops the signal: nothing can use the window.
		{"override zero, stop signal lost", nil, nil, i64(0), true, 0},
		// A grace period the pod asked for is kept whatever happens to the signal.
		{"default, stop signal lost", nil, nil, nil, true, 30 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			pod := newPod(v1.RestartPolicyAlways, "run", "done")
			if _, err := e.sync(pod); err != nil {
				t.Fatal(err)
			}
			done := e.latest(pod, "done")
			if err := e.f.Exit(done.ID, 0); err != nil {
				t.Fatal(err)
			}
			if tc.signalLost {
				e.f.SetStopSignalLost(e.latest(pod, "run").ID)
			}
			pod.Spec.TerminationGracePeriodSeconds, pod.DeletionGracePeriodSeconds = tc.spec, tc.deleted
			if err := e.m.KillPod(e.ctx, pod, e.status(pod), tc.override); err != nil {
				t.Fatal(err)
			}
			stops := e.f.Stops()
			if len(stops) != 1 || stops[0].ID != e.latest(pod, "run").ID || stops[0].Grace != tc.want {
				t.Errorf("stops = %+v; want only the running container, grace %s", stops, tc.want)
			}
			for _, c := range e.f.Containers() {
				if c.State == runtime.ContainerRunning {
					t.Errorf("container %s still running", c.Name)
				}
			}
		})
	}
}

func TestRemovePod(t *testing.T) {
	e := newEnv(t)
	pod := newPod(v1.RestartPolicyAlways, "c")
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	if err := e.m.RemovePod(e.ctx, e.status(pod)); err != nil {
		t.Fatal(err)
	}
	if len(e.f.Sandboxes())+len(e.f.Containers()) != 0 {
		t.Errorf("left %v %v", e.f.Sandboxes(), e.f.Containers())
	}
	// With every sandbox gone, so is what the backend kept beside them.
	if got := e.f.Released(); len(got) != 1 || got[0] != string(pod.UID) {
		t.Errorf("the backend released %v; want the pod %s", got, pod.UID)
	}
}

func TestPruneOldKeepsCurrentAndPrevious(t *testing.T) {
	e := newEnv(t)
	pod := newPod(v1.RestartPolicyAlways, "c")
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	sb := e.f.Sandboxes()[0].ID
	if err := e.f.Exit(e.latest(pod, "c").ID, 1); err != nil {
		t.Fatal(err)
	}
	// Attempts 1 and 2 exited, attempt 3 runs with the current spec.
	for attempt := 1; attempt <= 3; attempt++ {
		cfg := containerConfig(pod, &pod.Spec.Containers[0], nil, attempt, false)
		id, err := e.f.CreateContainer(e.ctx, sb, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.f.StartContainer(e.ctx, id); err != nil {
			t.Fatal(err)
		}
		if attempt < 3 {
			if err := e.f.Exit(id, 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	if res, err := e.sync(pod); err != nil || res.Changed {
		t.Fatalf("SyncPod = %+v, %v", res, err)
	}
	var got []string
	for _, c := range e.f.Containers() {
		got = append(got, fmt.Sprintf("%d:%s", c.Attempt, c.State))
	}
	if fmt.Sprint(got) != "[2:Exited 3:Running]" {
		t.Errorf("containers = %v; want the current and the previous attempt", got)
	}
}
