package syncloop

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/logtest"
	"github.com/runlet/runlet/internal/podconfig"
	"github.com/runlet/runlet/internal/polltest"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestLoopEndToEnd drives the whole loop: the real mux, PLEG, kuberuntime
// manager and status manager over the fake backend.
func TestLoopEndToEnd(t *testing.T) {
	e := newLoopEnv(t, envOptions{apiOnly: true})
	f, api := e.f, e.api

	grace := int64(3)
	mk := func(uid string, policy v1.RestartPolicy) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid), Name: uid, Namespace: "ns"},
			Spec: v1.PodSpec{RestartPolicy: policy, TerminationGracePeriodSeconds: &grace,
				Containers: []v1.Container{{Name: "c", Image: "img:1"}}}}
	}
	phase := func(uid types.UID) (v1.PodPhase, *v1.ContainerStatus) {
		p := e.pod(uid)
		if p == nil || len(p.Status.ContainerStatuses) == 0 {
			return "", nil
		}
		return p.Status.Phase, &p.Status.ContainerStatuses[0]
	}
	api <- []*v1.Pod{mk("always", v1.RestartPolicyAlways), mk("never", v1.RestartPolicyNever)}
	for _, uid := range []types.UID{"always", "never"} {
		polltest.Eventually(t, 10*time.Second, string(uid)+" Running", func() bool {
			ph, cs := phase(uid)
			return ph == v1.PodRunning && cs.Ready
		})
	}

	// A container exit reaches the status through the PLEG.
	var neverID string
	for _, c := range f.Containers() {
		if c.PodUID == "never" {
			neverID = c.ID
		}
	}
	if err := f.Exit(neverID, 3); err != nil {
		t.Fatal(err)
	}
	polltest.Eventually(t, 10*time.Second, "never Failed", func() bool { ph, _ := phase("never"); return ph == v1.PodFailed })
	if _, cs := phase("never"); cs.State.Terminated == nil || cs.State.Terminated.ExitCode != 3 {
		t.Errorf("container status = %+v; want terminated with 3", cs.State)
	}

	// REMOVE of a pod never seen marked for deletion: it went from the API
	// at once (a forced delete), so its running container is stopped with
	// the 2 s minimum, not the pod's 3 s, then everything is removed.
	api <- []*v1.Pod{}
	polltest.Eventually(t, 10*time.Second, "backend empty", func() bool { return len(f.Sandboxes())+len(f.Containers()) == 0 })
	var stopped bool
	for _, s := range f.Stops() {
		if s.Grace != 2*time.Second {
			t.Errorf("stop %+v; want the 2 s minimum of a forced delete", s)
		}
		stopped = true
	}
	if !stopped {
		t.Error("the running container was removed without a stop")
	}
	if n := f.Calls("CreateSandbox"); n != 2 {
		t.Errorf("CreateSandbox calls = %d; want 2", n)
	}
}

// TestLoopRetriesRemovedPod: a pod that left every source and whose
// termination failed (e.g. the backend was down) is retried after the
// back-off, although the pod manager no longer holds it.
func TestLoopRetriesRemovedPod(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fails := 1
	s := &fakeSyncer{calls: make(chan call, 100), terminating: func() error {
		if fails > 0 {
			fails--
			return errors.New("backend down")
		}
		return nil
	}}
	l := New(Config{Log: logtest.Discard(), SourcesSeen: func() bool { return true }})
	l.workers = newPodWorkers(ctx, s, l.queue, time.Hour, time.Millisecond)
	p := wpod("1")
	l.handleUpdate(podconfig.PodUpdate{Op: podconfig.ADD, Pods: []*v1.Pod{p}, Source: podconfig.APISource})
	expectCalls(t, s, "Sync@1")
	l.handleUpdate(podconfig.PodUpdate{Op: podconfig.REMOVE, Pods: []*v1.Pod{p}, Source: podconfig.APISource})
	expectCalls(t, s, "Terminating@1")
	// The sync ticker's work: dispatch whatever is due.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !l.workers.isFinished(p.UID) && ctx.Err() == nil {
			l.dispatchDue()
			time.Sleep(5 * time.Millisecond)
		}
	}()
	expectCalls(t, s, "Terminating@1", "Terminated@1")
	cancel()
	<-done
}

func TestRemovedGrace(t *testing.T) {
	deleted := wpod("1")
	now := metav1.Now()
	deleted.DeletionTimestamp = &now
	for _, c := range []struct {
		source string
		pod    *v1.Pod
		forced bool
	}{
		{podconfig.APISource, wpod("1"), true},
		{podconfig.APISource, deleted, false},
		{podconfig.FileSource, wpod("1"), false},
		{podconfig.HTTPSource, wpod("1"), false},
	} {
		got := removedGrace(c.source, c.pod)
		if forced := got != nil && *got == 0; forced != c.forced || (!c.forced && got != nil) {
			t.Errorf("removedGrace(%s, deletion %v) = %v; want forced %v", c.source, c.pod.DeletionTimestamp != nil, got, c.forced)
		}
	}
}
