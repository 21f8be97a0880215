package node

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
)

func condition(n *v1.Node, t v1.NodeConditionType) v1.NodeCondition {
	for _, c := range n.Status.Conditions {
		if c.Type == t {
			return c
		}
	}
	return v1.NodeCondition{}
}

// TestPressureConditions: the pressure conditions follow the source with
// the kubelet's reasons, a status is pushed only when one changes, the
// others keep their transition times, and node events say what changed.
func TestPressureConditions(t *testing.T) {
	tmpl := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}
	tmpl.Status.Conditions = Conditions(nil)
	start := tmpl.Status.Conditions[0].LastTransitionTime
	var mu sync.Mutex
	var pressure []v1.NodeConditionType
	rec := record.NewFakeRecorder(20)
	p := NewProvider(nil, tmpl).WithPressure(func() []v1.NodeConditionType {
		mu.Lock()
		defer mu.Unlock()
		return pressure
	}, rec)
	var pushed []*v1.Node
	p.notifyCb = func(n *v1.Node) { pushed = append(pushed, n) }

	p.check()
	if len(pushed) != 0 {
		t.Errorf("pushed %d statuses with nothing changed", len(pushed))
	}
	events := drain(rec)
	for _, want := range []string{"Normal NodeHasSufficientMemory Node node-1 status is now: NodeHasSufficientMemory",
		"Normal NodeHasNoDiskPressure Node node-1 status is now: NodeHasNoDiskPressure",
		"Normal NodeHasSufficientPID Node node-1 status is now: NodeHasSufficientPID"} {
		if !contains(events, want) {
			t.Errorf("first check: events %q lack %q", events, want)
		}
	}

	time.Sleep(1100 * time.Millisecond) // transition times have a 1 s resolution
	mu.Lock()
	pressure = []v1.NodeConditionType{v1.NodeDiskPressure}
	mu.Unlock()
	p.check()
	if len(pushed) != 1 {
		t.Fatalf("pushed %d statuses on DiskPressure", len(pushed))
	}
	disk := condition(pushed[0], v1.NodeDiskPressure)
	if disk.Status != v1.ConditionTrue || disk.Reason != "KubeletHasDiskPressure" || disk.Message != "runlet has disk pressure" {
		t.Errorf("DiskPressure %+v", disk)
	}
	if !disk.LastTransitionTime.After(start.Time) {
		t.Error("DiskPressure kept its old transition time")
	}
	if ready := condition(pushed[0], v1.NodeReady); ready.Status != v1.ConditionTrue || !ready.LastTransitionTime.Equal(&start) {
		t.Errorf("Ready %+v; want True since the start", ready)
	}
	if mem := condition(pushed[0], v1.NodeMemoryPressure); mem.Status != v1.ConditionFalse || mem.Reason != "KubeletHasSufficientMemory" {
		t.Errorf("MemoryPressure %+v", mem)
	}
	if events := drain(rec); len(events) != 1 || events[0] != "Normal NodeHasDiskPressure Node node-1 status is now: NodeHasDiskPressure" {
		t.Errorf("events %q", events)
	}

	p.check()
	if len(pushed) != 1 || len(drain(rec)) != 0 {
		t.Error("an unchanged pressure was pushed or recorded again")
	}
	mu.Lock()
	pressure = nil
	mu.Unlock()
	p.check()
	if len(pushed) != 2 || condition(pushed[1], v1.NodeDiskPressure).Reason != "KubeletHasNoDiskPressure" {
		t.Errorf("DiskPressure not cleared: %d pushes", len(pushed))
	}
	if events := drain(rec); len(events) != 1 || !strings.Contains(events[0], "NodeHasNoDiskPressure") {
		t.Errorf("events %q", events)
	}
}

func drain(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// TestRegisteredNotReadyTurnsReady: a node that registers NotReady (its pod
// network waits for a podCIDR) is pushed Ready by the first check that
// passes, and NotReady again with the check's message when it fails.
func TestRegisteredNotReadyTurnsReady(t *testing.T) {
	tmpl := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}
	var mu sync.Mutex
	health := errors.New("container runtime network not ready: no podCIDR")
	tmpl.Status.Conditions = Conditions(health)
	p := NewProvider(nil, tmpl, func() error { mu.Lock(); defer mu.Unlock(); return health })
	var pushed []*v1.Node
	p.notifyCb = func(n *v1.Node) { pushed = append(pushed, n) }
	p.check()
	if len(pushed) != 0 {
		t.Fatalf("pushed %d statuses while still not ready", len(pushed))
	}
	mu.Lock()
	health = nil
	mu.Unlock()
	p.Refresh()
	if len(pushed) != 1 || condition(pushed[0], v1.NodeReady).Status != v1.ConditionTrue {
		t.Fatalf("after the check passed: pushed %d, Ready %+v", len(pushed), pushed)
	}
	mu.Lock()
	health = errors.New("network plugin gone")
	mu.Unlock()
	p.check()
	if c := condition(pushed[len(pushed)-1], v1.NodeReady); len(pushed) != 2 || c.Status != v1.ConditionFalse || c.Message != "network plugin gone" {
		t.Fatalf("after the check failed: pushed %d, Ready %+v", len(pushed), c)
	}
}

// TestReconcilePushesWhatTheAPILacks: a status the API holds otherwise (the
// node lifecycle controller's Unknown after an outage) is pushed again at
// once; a Node that agrees pushes nothing.
func TestReconcilePushesWhatTheAPILacks(t *testing.T) {
	tmpl := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}
	tmpl.Status.Conditions = Conditions(nil)
	p := NewProvider(nil, tmpl)
	var pushed []*v1.Node
	p.notifyCb = func(n *v1.Node) { pushed = append(pushed, n) }
	p.check()

	api := tmpl.DeepCopy()
	p.Reconcile(api)
	if len(pushed) != 0 {
		t.Fatalf("pushed %d statuses for a Node that agrees", len(pushed))
	}
	for i := range api.Status.Conditions {
		if api.Status.Conditions[i].Type == v1.NodeReady {
			api.Status.Conditions[i].Status = v1.ConditionUnknown
		}
	}
	p.Reconcile(api)
	if len(pushed) != 1 || condition(pushed[0], v1.NodeReady).Status != v1.ConditionTrue {
		t.Fatalf("after the API's Ready went Unknown: pushed %d, want one with Ready True", len(pushed))
	}
	api.Status.Conditions = nil
	p.Reconcile(api)
	if len(pushed) != 2 {
		t.Fatalf("a Node without conditions: pushed %d in all, want 2", len(pushed))
	}
}
