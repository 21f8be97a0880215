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
	m := NewManager(Config{})
	m.now = func() time.Time { return *now }
	return m
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

func TestManagerNotifiesFromItsOwnGoroutine(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := NewManager(Config{})
	pod := testPod(v1.RestartPolicyAlways, "c")
	m.SetPodStatus(pod, st(v1.PodPending, v1.ConditionFalse)) // before any notifier: queued
	got := make(chan *v1.Pod)                                 // unbuffered: a synchronous call would block the caller forever
	go m.Deliver(ctx, func(p *v1.Pod) { got <- p })
	go m.Run(ctx)
	recv := func(want v1.PodPhase) {
		t.Helper()
		select {
		case p := <-got:
			if p.Status.Phase != want || p.UID != pod.UID {
				t.Errorf("notified %s %s; want %s", p.UID, p.Status.Phase, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no notification for %s", want)
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
		t.Fatal("SetPodStatus waited for the notifier")
	}
	recv(v1.PodRunning)
}

// TestSentStatusKeepsForeignConditions: a status sent upstream carries the
// conditions others set as the API holds them now, not as runlet saw them.
func TestSentStatusKeepsForeignConditions(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	gate := v1.PodCondition{Type: "example.com/gate", Status: v1.ConditionTrue}
	pod := testPod(v1.RestartPolicyAlways, "c")
	inAPI := pod.DeepCopy()
	flipped := gate
	flipped.Status = v1.ConditionFalse
	inAPI.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionFalse}, flipped}
	m := NewManager(Config{APIPods: func(p *v1.Pod) (*v1.Pod, bool) { return inAPI, p.UID == inAPI.UID }})
	sent := make(chan *v1.Pod, 1)
	go m.Deliver(ctx, func(p *v1.Pod) { sent <- p })
	go m.Run(ctx)
	m.SetPodStatus(pod, v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}, gate}})
	select {
	case p := <-sent:
		var got []string
		for _, c := range p.Status.Conditions {
			got = append(got, string(c.Type)+"="+string(c.Status))
		}
		if len(got) != 2 || got[0] != "Ready=True" || got[1] != "example.com/gate=False" {
			t.Fatalf("sent conditions %v; want runlet's Ready and the API's gate", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no status sent")
	}
}
