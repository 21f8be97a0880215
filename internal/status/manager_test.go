package status

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func st(phase v1.PodPhase, ready v1.ConditionStatus) v1.PodStatus {
	return v1.PodStatus{Phase: phase, Conditions: []v1.PodCondition{
		{Type: v1.PodScheduled, Status: v1.ConditionTrue},
		{Type: v1.PodReady, Status: ready},
	}}
}

func findCond(s v1.PodStatus, typ v1.PodConditionType) v1.PodCondition {
	for _, c := range s.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return v1.PodCondition{}
}

func newTestManager(now *time.Time) *Manager {
	m := NewManager(Config{Writer: nopWriter{}})
	m.now = func() time.Time { return *now }
	return m
}

type nopWriter struct{}

func (nopWriter) WriteStatus(context.Context, *v1.Pod) error { return nil }
func (nopWriter) DeletePod(context.Context, *v1.Pod) error   { return nil }

// drain returns the pods whose writes are queued, as the workers take them,
// and ends their writes as if they succeeded.
func (m *Manager) drain() []*v1.Pod {
	var out []*v1.Pod
	for uid := range m.api.take() {
		if p, ok := m.GetPod(uid); ok {
			out = append(out, p)
		}
		m.api.done(uid, false, false)
	}
	return out
}

func TestManagerNotifiesOnlyOnChange(t *testing.T) {
	now := tStart
	m := newTestManager(&now)
	pod := testPod(v1.RestartPolicyAlways, "c")
	steps := []struct {
		st     v1.PodStatus
		notify bool
	}{
		{st(v1.PodPending, v1.ConditionFalse), true},
		{st(v1.PodPending, v1.ConditionFalse), false},
		{st(v1.PodRunning, v1.ConditionTrue), true},
		{st(v1.PodRunning, v1.ConditionTrue), false},
		{st(v1.PodRunning, v1.ConditionFalse), true},
	}
	for i, s := range steps {
		now = now.Add(time.Minute) // a later time must not count as a change
		m.SetPodStatus(pod, s.st)
		if got := len(m.drain()); got != map[bool]int{true: 1, false: 0}[s.notify] {
			t.Errorf("step %d: %d notifications; want notify=%v", i, got, s.notify)
		}
	}
}

func TestManagerKeepsStartTimeAndTransitions(t *testing.T) {
	now := tStart
	m := newTestManager(&now)
	pod := testPod(v1.RestartPolicyAlways, "c")
	m.SetPodStatus(pod, st(v1.PodPending, v1.ConditionFalse))
	now = tStart.Add(time.Hour)
	m.SetPodStatus(pod, st(v1.PodRunning, v1.ConditionTrue))
	got, ok := m.GetPod(pod.UID)
	if !ok {
		t.Fatal("no status")
	}
	if got.Status.StartTime == nil || !got.Status.StartTime.Time.Equal(tStart) {
		t.Errorf("startTime = %v; want %v", got.Status.StartTime, tStart)
	}
	if lt := findCond(got.Status, v1.PodScheduled).LastTransitionTime; !lt.Time.Equal(tStart) {
		t.Errorf("PodScheduled transition = %v; want the first %v", lt, tStart)
	}
	if lt := findCond(got.Status, v1.PodReady).LastTransitionTime; !lt.Time.Equal(now) {
		t.Errorf("Ready transition = %v; want %v", lt, now)
	}

	// A manager with no record keeps the start time the API already holds.
	m2 := newTestManager(&now)
	api := pod.DeepCopy()
	api.UID = "other"
	earlier := metav1.NewTime(tStart.Add(-time.Hour))
	api.Status.StartTime = &earlier
	m2.SetPodStatus(api, st(v1.PodRunning, v1.ConditionTrue))
	if got, _ := m2.GetPod("other"); !got.Status.StartTime.Time.Equal(earlier.Time) {
		t.Errorf("startTime = %v; want the API's %v", got.Status.StartTime, earlier)
	}
}

func TestManagerTerminalIsFinal(t *testing.T) {
	now := tStart
	m := newTestManager(&now)
	pod := testPod(v1.RestartPolicyNever, "c")
	m.SetPodStatus(pod, st(v1.PodFailed, v1.ConditionFalse))
	m.drain()
	m.SetPodStatus(pod, st(v1.PodRunning, v1.ConditionTrue))
	if got, _ := m.GetPod(pod.UID); got.Status.Phase != v1.PodFailed {
		t.Errorf("phase = %s; want Failed kept", got.Status.Phase)
	}
	if n := len(m.drain()); n != 0 {
		t.Errorf("%d notifications after a terminal status; want 0", n)
	}
	m.Delete(pod.UID)
	if _, ok := m.GetPod(pod.UID); ok {
		t.Error("Delete kept the status")
	}
}

// blockingWriter hands every write to a channel nobody may be reading.
type blockingWriter struct{ got chan *v1.Pod }

func (w blockingWriter) WriteStatus(_ context.Context, p *v1.Pod) error { w.got <- p; return nil }
func (w blockingWriter) DeletePod(_ context.Context, p *v1.Pod) error   { w.got <- p; return nil }

func TestManagerWritesFromItsOwnGoroutines(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := blockingWriter{got: make(chan *v1.Pod)} // unbuffered: a synchronous write would block the caller forever
	m := NewManager(Config{Writer: w})
	pod := testPod(v1.RestartPolicyAlways, "c")
	m.SetPodStatus(pod, st(v1.PodPending, v1.ConditionFalse)) // before Run: queued
	go m.Run(ctx)
	recv := func(want v1.PodPhase) {
		t.Helper()
		select {
		case p := <-w.got:
			if p.Status.Phase != want || p.UID != pod.UID {
				t.Errorf("wrote %s %s; want %s", p.UID, p.Status.Phase, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no write of %s", want)
		}
	}
	recv(v1.PodPending)
	returned := make(chan struct{})
	go func() {
		m.SetPodStatus(pod, st(v1.PodRunning, v1.ConditionTrue))
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("SetPodStatus waited for the writer")
	}
	recv(v1.PodRunning)
}

// goneWriter answers as APIWriter does while the node's pods have not been
// listed (the apiserver does not answer): the pod is not there.
type goneWriter struct{}

func (goneWriter) WriteStatus(context.Context, *v1.Pod) error { return ErrPodGone }
func (goneWriter) DeletePod(context.Context, *v1.Pod) error   { return ErrPodGone }

// TestWrittenSeesWhatWouldBeWritten: the checkpoint is told every status the
// manager writes, or would write while the API cannot take it, and not the
// final status of a pod it deletes.
func TestWrittenSeesWhatWouldBeWritten(t *testing.T) {
	var got []v1.PodPhase
	m := NewManager(Config{Writer: goneWriter{}, Written: func(p *v1.Pod) { got = append(got, p.Status.Phase) }})
	pod := testPod(v1.RestartPolicyAlways, "c")
	m.SetPodStatus(pod, st(v1.PodRunning, v1.ConditionTrue))
	m.syncAPI(context.Background(), pod.UID, false)
	m.syncAPI(context.Background(), pod.UID, true)
	if len(got) != 1 || got[0] != v1.PodRunning {
		t.Errorf("told %v; want the Running status once", got)
	}
}
