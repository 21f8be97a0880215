package status

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// probes answers started and ready by container ID.
type probes struct{ started, ready map[string]bool }

func (p probes) Started(_ *v1.Pod, _ *v1.Container, id string, _ time.Time) bool {
	return p.started[id]
}
func (p probes) Ready(_ *v1.Pod, _ *v1.Container, id string, _ time.Time) bool { return p.ready[id] }

func TestGenerateReadyFromProbes(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "a", "b")
	ps := podStatus(running("ida", "a", 0), running("idb", "b", 0))
	cases := []struct {
		name             string
		p                probes
		wantA, startedA  bool
		wantPod, wantAll v1.ConditionStatus
	}{
		{"all ready", probes{map[string]bool{"ida": true, "idb": true}, map[string]bool{"ida": true, "idb": true}}, true, true, v1.ConditionTrue, v1.ConditionTrue},
		{"a unready", probes{map[string]bool{"ida": true, "idb": true}, map[string]bool{"idb": true}}, false, true, v1.ConditionFalse, v1.ConditionFalse},
		// Not started is not ready, whatever readiness says.
		{"a not started", probes{map[string]bool{"idb": true}, map[string]bool{"ida": true, "idb": true}}, false, false, v1.ConditionFalse, v1.ConditionFalse},
	}
	for _, tc := range cases {
		st := Generate(Input{Pod: pod, Runtime: ps, RuntimeName: "podman", Probes: tc.p})
		a := st.ContainerStatuses[0]
		if a.Ready != tc.wantA || *a.Started != tc.startedA {
			t.Errorf("%s: a ready=%v started=%v", tc.name, a.Ready, *a.Started)
		}
		if condStatus(st, v1.PodReady) != tc.wantPod || condStatus(st, v1.ContainersReady) != tc.wantAll {
			t.Errorf("%s: conditions %+v", tc.name, st.Conditions)
		}
	}
}

func TestReadinessGates(t *testing.T) {
	pod := testPod(v1.RestartPolicyAlways, "c")
	pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: "example.com/one"}, {ConditionType: "example.com/two"}}
	ps := podStatus(running("id1", "c", 0))
	ready := func() v1.PodCondition {
		return findCond(Generate(Input{Pod: pod, Runtime: ps, RuntimeName: "podman"}), v1.PodReady)
	}
	c := ready()
	if c.Status != v1.ConditionFalse || c.Reason != readinessGatesNotReady ||
		c.Message != `corresponding condition of pod readiness gate "example.com/one" does not exist., corresponding condition of pod readiness gate "example.com/two" does not exist.` {
		t.Fatalf("no gate conditions: %+v", c)
	}
	pod.Status.Conditions = []v1.PodCondition{{Type: "example.com/one", Status: v1.ConditionTrue}, {Type: "example.com/two", Status: v1.ConditionFalse}}
	if c := ready(); c.Status != v1.ConditionFalse || c.Message != `the status of pod readiness gate "example.com/two" is not "True", but False` {
		t.Fatalf("one gate false: %+v", c)
	}
	pod.Status.Conditions[1].Status = v1.ConditionTrue
	st := Generate(Input{Pod: pod, Runtime: ps, RuntimeName: "podman"})
	if c := findCond(st, v1.PodReady); c.Status != v1.ConditionTrue {
		t.Fatalf("both gates true: %+v", c)
	}
	// The gates' conditions are carried in the status runlet writes.
	if findCond(st, "example.com/one").Status != v1.ConditionTrue || findCond(st, "example.com/two").Status != v1.ConditionTrue {
		t.Fatalf("foreign conditions dropped: %+v", st.Conditions)
	}
	// Unready containers win over the gates, with their own reason.
	ps = podStatus()
	if c := ready(); c.Status != v1.ConditionFalse || c.Reason != "ContainersNotReady" {
		t.Fatalf("no container: %+v", c)
	}
}

func TestKeepForeignConditions(t *testing.T) {
	st := v1.PodStatus{Conditions: []v1.PodCondition{
		{Type: v1.PodReady, Status: v1.ConditionTrue},
		{Type: "example.com/gate", Status: v1.ConditionFalse},
	}}
	api := []v1.PodCondition{
		{Type: v1.PodReady, Status: v1.ConditionFalse}, // the API's copy of an owned condition loses
		{Type: "example.com/gate", Status: v1.ConditionTrue},
		{Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: "EvictionByEvictionAPI"},
	}
	KeepForeignConditions(&st, api)
	want := map[v1.PodConditionType]v1.ConditionStatus{v1.PodReady: v1.ConditionTrue, "example.com/gate": v1.ConditionTrue, v1.DisruptionTarget: v1.ConditionTrue}
	if len(st.Conditions) != len(want) {
		t.Fatalf("conditions %+v", st.Conditions)
	}
	for typ, s := range want {
		if findCond(st, typ).Status != s {
			t.Errorf("%s = %s, want %s", typ, findCond(st, typ).Status, s)
		}
	}
}

func TestSetContainerReadiness(t *testing.T) {
	now := tStart
	m := newTestManager(&now)
	pod := testPod(v1.RestartPolicyAlways, "c")
	pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: "example.com/gate"}}
	pod.Status.Conditions = []v1.PodCondition{{Type: "example.com/gate", Status: v1.ConditionTrue}}
	ps := podStatus(running("id1", "c", 0))
	unready := probes{map[string]bool{"id1": true}, map[string]bool{}}
	m.SetPodStatus(pod, Generate(Input{Pod: pod, Runtime: ps, RuntimeName: "podman", Probes: unready}))
	m.drain()

	m.SetContainerReadiness(pod.UID, "id1", true)
	got, _ := m.PodStatus(pod.UID)
	if !got.ContainerStatuses[0].Ready || findCond(got, v1.PodReady).Status != v1.ConditionTrue ||
		findCond(got, v1.ContainersReady).Status != v1.ConditionTrue {
		t.Fatalf("after readiness success: %+v", got)
	}
	if len(m.drain()) != 1 {
		t.Fatal("the readiness change was not pushed")
	}
	m.SetContainerReadiness(pod.UID, "id1", true)
	if len(m.drain()) != 0 {
		t.Fatal("an unchanged readiness was pushed again")
	}
	m.SetContainerStartup(pod.UID, "id1", false)
	if got, _ := m.PodStatus(pod.UID); *got.ContainerStatuses[0].Started {
		t.Fatal("startup failure not recorded")
	}
	m.SetContainerReadiness(pod.UID, "id1", false)
	got, _ = m.PodStatus(pod.UID)
	if c := findCond(got, v1.PodReady); c.Status != v1.ConditionFalse || c.Reason != "ContainersNotReady" {
		t.Fatalf("after readiness failure: %+v", c)
	}
	m.SetContainerReadiness(pod.UID, "unknown", true) // another container's ID: nothing happens
	m.SetContainerReadiness("other-pod", "id1", true)
}

// TestStartedAlwaysSet: a container not created yet says started=false, as
// on the kubelet (clients dereference the flag).
func TestStartedAlwaysSet(t *testing.T) {
	st := Generate(Input{Pod: testPod(v1.RestartPolicyAlways, "c"), Runtime: podStatus(), RuntimeName: "podman"})
	if s := st.ContainerStatuses[0].Started; s == nil || *s {
		t.Fatalf("started = %v; want false", s)
	}
}
