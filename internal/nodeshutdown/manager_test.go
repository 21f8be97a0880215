package nodeshutdown

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/polltest"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

func TestPeriodsSplitShutdownGracePeriodAsTheKubelet(t *testing.T) {
	for _, tc := range []struct {
		name             string
		period, critical time.Duration
		byPriority       []ByPodPriority
		want             []ByPodPriority
	}{
		{name: "off", want: nil},
		{name: "regular and critical", period: 30 * time.Second, critical: 10 * time.Second,
			want: []ByPodPriority{{Priority: 0, ShutdownGracePeriodSeconds: 20}, {Priority: systemCriticalPriority, ShutdownGracePeriodSeconds: 10}}},
		{name: "all regular", period: 30 * time.Second,
			want: []ByPodPriority{{Priority: 0, ShutdownGracePeriodSeconds: 30}, {Priority: systemCriticalPriority, ShutdownGracePeriodSeconds: 0}}},
		{name: "critical over the whole", period: 10 * time.Second, critical: 20 * time.Second, want: nil},
		{name: "by priority, sorted", byPriority: []ByPodPriority{{Priority: 100000, ShutdownGracePeriodSeconds: 5}, {Priority: 0, ShutdownGracePeriodSeconds: 7}},
			want: []ByPodPriority{{Priority: 0, ShutdownGracePeriodSeconds: 7}, {Priority: 100000, ShutdownGracePeriodSeconds: 5}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Periods(tc.period, tc.critical, tc.byPriority); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Periods = %v; want %v", got, tc.want)
			}
		})
	}
}

func TestGroupByPriorityAsTheKubelet(t *testing.T) {
	periods := []ByPodPriority{{Priority: 0}, {Priority: 1000}, {Priority: systemCriticalPriority}}
	pods := []*v1.Pod{
		pod("none", nil, nil), pod("negative", ptr.To[int32](-5), nil), pod("at1000", ptr.To[int32](1000), nil),
		pod("between", ptr.To[int32](5000), nil), pod("critical", critical(), nil), pod("above", ptr.To[int32](systemCriticalPriority+1000), nil),
	}
	var got [][]string
	for _, g := range groupByPriority(periods, pods) {
		var names []string
		for _, p := range g.pods {
			names = append(names, p.Name)
		}
		got = append(got, names)
	}
	want := [][]string{{"none", "negative"}, {"at1000", "between"}, {"critical", "above"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("groups %v; want %v", got, want)
	}
}

// Regular pods are stopped first, all at once, each within the smaller of
// its own grace period and its group's; critical pods only once they have.
func TestShutdownStopsRegularPodsBeforeCriticalOnesWithGraceCapped(t *testing.T) {
	node := newFakeNode(pod("long", nil, ptr.To[int64](300)), pod("short", nil, ptr.To[int64](5)),
		pod("unset", nil, nil), pod("system", critical(), ptr.To[int64](30)))
	m, _, _ := newManager(t, node, 20*time.Second, 10*time.Second)
	done, err := m.Shutdown(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	polltest.Eventually(t, 5*time.Second, "the regular pods' kills", func() bool { return len(node.killed()) == 3 })
	if want := map[string]int64{"long": 20, "short": 5, "unset": 20}; !maps.Equal(node.names(), want) {
		t.Fatalf("kills %v; want %v, and the critical pod not yet", node.names(), want)
	}
	node.stop("long")
	node.stop("short")
	node.stop("unset")
	polltest.Eventually(t, 5*time.Second, "the critical pod's kill", func() bool { return len(node.killed()) == 4 })
	if k := node.killed()[3]; k.pod != "system" || k.grace != 10 {
		t.Errorf("last kill %s within %ds; want system within 10s", k.pod, k.grace)
	}
	select {
	case <-done:
		t.Fatal("shutdown done before the critical pod stopped")
	default:
	}
	node.stop("system")
	<-done
}

// A group whose pods do not stop holds the next one back only for its own
// grace period.
func TestShutdownMovesOnWhenAGroupsGracePeriodEnds(t *testing.T) {
	node := newFakeNode(pod("stuck", nil, nil), pod("system", critical(), nil))
	m, clk, _ := newManager(t, node, 20*time.Second, 10*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done, err := m.Shutdown(ctx)
	if err != nil {
		t.Fatal(err)
	}
	polltest.Eventually(t, 5*time.Second, "the regular group's timer", func() bool { return clk.HasWaiters() && len(node.killed()) == 1 })
	clk.Step(19 * time.Second)
	if n := len(node.killed()); n != 1 {
		t.Fatalf("%d kills before the regular group's grace period ended; want 1", n)
	}
	clk.Step(time.Second)
	polltest.Eventually(t, 5*time.Second, "the critical pod's kill", func() bool { return len(node.killed()) == 2 })
	node.stop("system")
	<-done
}

func TestStoppedPodsStatusIsTheKubelets(t *testing.T) {
	node := newFakeNode(pod("web", nil, nil))
	m, _, _ := newManager(t, node, 20*time.Second, 10*time.Second)
	done, _ := m.Shutdown(context.Background())
	polltest.Eventually(t, 5*time.Second, "the kill", func() bool { return len(node.killed()) == 1 })
	node.stop("web")
	<-done
	statusFn := node.killed()[0].status

	st := v1.PodStatus{Phase: v1.PodRunning, Conditions: []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue}}}
	statusFn(&st)
	if st.Phase != v1.PodFailed || st.Reason != "Terminated" || st.Message != "Pod was terminated in response to imminent node shutdown." {
		t.Errorf("status %s/%s %q; want Failed/Terminated with the kubelet's message", st.Phase, st.Reason, st.Message)
	}
	c := st.Conditions[len(st.Conditions)-1]
	if c.Type != v1.DisruptionTarget || c.Status != v1.ConditionTrue || c.Reason != v1.PodReasonTerminationByKubelet ||
		c.Message != st.Message || c.ObservedGeneration != 3 || c.LastTransitionTime.IsZero() {
		t.Errorf("condition %+v; want DisruptionTarget True TerminationByKubelet of generation 3", c)
	}

	succeeded := v1.PodStatus{Phase: v1.PodSucceeded}
	statusFn(&succeeded)
	if succeeded.Phase != v1.PodSucceeded || succeeded.Reason != "Terminated" {
		t.Errorf("a succeeded pod became %s/%s; want Succeeded/Terminated", succeeded.Phase, succeeded.Reason)
	}
}

// While the node shuts down it refuses new pods, reports itself not ready,
// and says so in an event; a cancelled shutdown undoes both.
func TestShuttingDownNodeRefusesPodsAndIsNotReady(t *testing.T) {
	node := newFakeNode()
	m, _, rec := newManager(t, node, 20*time.Second, 10*time.Second)
	if ok, _, _ := m.Admit(pod("before", nil, nil)); !ok || m.ShutdownStatus() != nil {
		t.Fatal("a node not shutting down refuses pods or is not ready")
	}
	done, err := m.Shutdown(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	<-done
	<-m.Changed()
	ok, reason, msg := m.Admit(pod("after", nil, nil))
	if ok || reason != "NodeShutdown" || msg != "Pod was rejected as the node is shutting down." {
		t.Errorf("Admit = %v %q %q; want the kubelet's NodeShutdown refusal", ok, reason, msg)
	}
	if err := m.ShutdownStatus(); err == nil || err.Error() != "node is shutting down" {
		t.Errorf("ShutdownStatus = %v; want node is shutting down", err)
	}
	if e := <-rec.Events; e != "Normal NodeShutdown Shutdown manager detected shutdown event" {
		t.Errorf("event %q", e)
	}
	again, _ := m.Shutdown(context.Background())
	if again != done {
		t.Error("a second request started a second shutdown")
	}
	m.Cancel()
	<-m.Changed()
	if ok, _, _ := m.Admit(pod("later", nil, nil)); !ok || m.ShutdownStatus() != nil {
		t.Error("after a cancelled shutdown the node still refuses pods or is not ready")
	}
	if e := <-rec.Events; e != "Normal NodeShutdown Shutdown manager detected shutdown cancellation" {
		t.Errorf("event %q", e)
	}
}

// Right after a restart the node has not yet taken its pods in again: the
// shutdown waits for them rather than stopping nothing and refusing them.
func TestShutdownWaitsForThePodSourcesAfterARestart(t *testing.T) {
	node := newFakeNode()
	node.notReady = true
	m, _, _ := newManager(t, node, 20*time.Second, 10*time.Second)
	done, _ := m.Shutdown(context.Background())
	if ok, _, _ := m.Admit(pod("web", nil, nil)); !ok {
		t.Fatal("a pod the node already runs was refused while its sources were read")
	}
	time.Sleep(3 * poll) // not a timing assertion: gives a wrong shutdown the time to stop nothing
	node.admit(pod("web", nil, nil))
	polltest.Eventually(t, 5*time.Second, "the re-admitted pod's kill", func() bool { return len(node.killed()) == 1 })
	node.stop("web")
	<-done
}

func TestShutdownIsOffWithoutAGracePeriod(t *testing.T) {
	node := newFakeNode(pod("web", nil, nil))
	m, _, _ := newManager(t, node, 0, 0)
	if _, err := m.Shutdown(context.Background()); !errors.Is(err, ErrOff) {
		t.Errorf("Shutdown = %v; want ErrOff", err)
	}
	if len(node.killed()) != 0 || m.ShutdownStatus() != nil {
		t.Error("a node without a grace period stopped pods or went not ready")
	}
}
