package eviction

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/logtest"
	"github.com/runlet/runlet/internal/polltest"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	clocktesting "k8s.io/utils/clock/testing"
)

// fakeNode is the node the manager watches: its figures, its pods and
// their usage, and the kills asked for.
type fakeNode struct {
	mu        sync.Mutex
	clock     *clocktesting.FakeClock
	memAvail  uint64 // of 4Gi
	fsAvail   uint64 // of 64Mi
	procs     int64  // of 32768
	pods      []*v1.Pod
	podStats  map[types.UID]statsapi.PodStats
	killed    []killCall
	cleanedUp map[types.UID]bool
}

type killCall struct {
	pod    *v1.Pod
	grace  int64
	status v1.PodStatus
}

func newFakeNode() *fakeNode {
	return &fakeNode{clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)),
		memAvail: 2 << 30, fsAvail: 32 << 20, procs: 100, podStats: map[types.UID]statsapi.PodStats{}, cleanedUp: map[types.UID]bool{}}
}

func (f *fakeNode) NodeSummary(context.Context) (*statsapi.Summary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := metav1.NewTime(f.clock.Now())
	return &statsapi.Summary{Node: statsapi.NodeStats{
		Memory: &statsapi.MemoryStats{Time: t, AvailableBytes: u64(f.memAvail), WorkingSetBytes: u64(4<<30 - f.memAvail)},
		Fs:     &statsapi.FsStats{Time: t, AvailableBytes: u64(f.fsAvail), CapacityBytes: u64(64 << 20), InodesFree: u64(1000), Inodes: u64(1000)},
		Rlimit: &statsapi.RlimitStats{Time: t, MaxPID: i64(32768), NumOfRunningProcesses: i64(f.procs)},
	}}, nil
}

func (f *fakeNode) Summary(ctx context.Context) (*statsapi.Summary, error) {
	s, _ := f.NodeSummary(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ps := range f.podStats {
		s.Pods = append(s.Pods, ps)
	}
	return s, nil
}

func (f *fakeNode) active() []*v1.Pod {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*v1.Pod
	for _, p := range f.pods {
		if !f.wasKilled(p.UID) {
			out = append(out, p)
		}
	}
	return out
}

func (f *fakeNode) wasKilled(uid types.UID) bool {
	for _, k := range f.killed {
		if k.pod.UID == uid {
			return true
		}
	}
	return false
}

func (f *fakeNode) kill(pod *v1.Pod, evicted bool, grace *int64, fn func(*v1.PodStatus)) error {
	st := v1.PodStatus{Phase: v1.PodRunning}
	fn(&st)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.killed = append(f.killed, killCall{pod: pod, grace: *grace, status: st})
	return nil
}

func (f *fakeNode) kills() []killCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]killCall(nil), f.killed...)
}

func (f *fakeNode) set(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn()
}

func newTestManager(t *testing.T, f *fakeNode, hard map[string]string) (*Manager, *record.FakeRecorder) {
	t.Helper()
	thresholds, err := ParseThresholdConfig(hard, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	log := logtest.Discard()
	rec := record.NewFakeRecorder(100)
	rec.IncludeObject = true
	m := NewManager(Config{
		Thresholds: thresholds, PressureTransitionPeriod: DefaultPressureTransitionPeriod,
		Stats: f, DedicatedImageFs: func() (bool, error) { return true, nil },
		ActivePods: f.active, KillPod: f.kill,
		PodCleanedUp: func(p *v1.Pod) bool { f.mu.Lock(); defer f.mu.Unlock(); return f.cleanedUp[p.UID] },
		Recorder:     rec, NodeRef: &v1.ObjectReference{Kind: "Node", Name: "node-1", UID: "node-1"},
		Log: log, Clock: f.clock,
	})
	return m, rec
}

// diskPods are a pod filling its emptyDir and two quiet ones; the
// Guaranteed one uses more memory than the BestEffort one.
func diskPods(f *fakeNode) (filler, quiet, guaranteed *v1.Pod) {
	emptyDir := []v1.Volume{newVolume("data", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}})}
	filler = newPod("filler", defaultPriority, []v1.Container{newContainer("fill", nil, nil)}, emptyDir)
	quiet = newPod("quiet", defaultPriority, []v1.Container{newContainer("idle", nil, nil)}, emptyDir)
	guaranteed = newPod("guaranteed", defaultPriority, []v1.Container{newContainer("app", newResourceList("100m", "1Gi", "1Gi"), newResourceList("100m", "1Gi", "1Gi"))}, emptyDir)
	for _, p := range []*v1.Pod{filler, quiet, guaranteed} {
		p.Namespace = "ns"
	}
	f.pods = []*v1.Pod{guaranteed, quiet, filler}
	q := resource.MustParse
	f.podStats[filler.UID] = newPodDiskStats(filler, q("8Ki"), q("4Ki"), q("58Mi"))
	f.podStats[quiet.UID] = newPodDiskStats(quiet, q("8Ki"), q("4Ki"), q("4Ki"))
	f.podStats[guaranteed.UID] = newPodDiskStats(guaranteed, q("8Ki"), q("4Ki"), q("1Mi"))
	return filler, quiet, guaranteed
}

// TestDiskPressureEvictsOnePodPerRound: past nodefs.available<10% the node
// reports DiskPressure and each round evicts one pod, the filler first,
// with a grace of 1 s, the kubelet's status and events.
func TestDiskPressureEvictsOnePodPerRound(t *testing.T) {
	f := newFakeNode()
	filler, quiet, guaranteed := diskPods(f)
	m, rec := newTestManager(t, f, DefaultEvictionHard)

	if got := round(m, f); got != nil || m.IsUnderDiskPressure() {
		t.Fatalf("evicted %v / pressure %v with half the disk free", got, m.IsUnderDiskPressure())
	}
	f.set(func() { f.fsAvail = 3 << 20 })
	if got := round(m, f); got != filler {
		t.Fatalf("first round evicted %v; want the filler", got)
	}
	if !m.IsUnderDiskPressure() || m.IsUnderMemoryPressure() || m.IsUnderPIDPressure() {
		t.Errorf("pressure %v; want DiskPressure only", m.Pressure())
	}
	kills := f.kills()
	if len(kills) != 1 {
		t.Fatalf("%d pods killed in one round", len(kills))
	}
	k := kills[0]
	wantMsg := "The node was low on resource: ephemeral-storage. Threshold quantity: 6710886, available: 3Mi. " +
		"Container fill was using 12Ki, request is 0, has larger consumption of ephemeral-storage. "
	if k.grace != 1 || k.status.Phase != v1.PodFailed || k.status.Reason != "Evicted" || k.status.Message != wantMsg {
		t.Errorf("killed with grace %d, status %s/%s %q", k.grace, k.status.Phase, k.status.Reason, k.status.Message)
	}
	if len(k.status.Conditions) != 1 || k.status.Conditions[0].Type != v1.DisruptionTarget ||
		k.status.Conditions[0].Reason != v1.PodReasonTerminationByKubelet || k.status.Conditions[0].Message != wantMsg {
		t.Errorf("conditions %+v; want DisruptionTarget by the kubelet", k.status.Conditions)
	}
	events := drain(rec)
	if !hasEvent(events, "Warning EvictionThresholdMet Attempting to reclaim ephemeral-storage", "Node") ||
		!hasEvent(events, "Warning Evicted "+wantMsg, "offending_containers:fill ") {
		t.Errorf("events %q", events)
	}

	// Pressure holds: the next round takes the next pod, and only one.
	if got := round(m, f); got != quiet {
		t.Fatalf("second round evicted %v; want the quiet BestEffort pod", got)
	}
	if got := round(m, f); got != guaranteed {
		t.Fatalf("third round evicted %v; want the pod within its requests last", got)
	}
	if got := round(m, f); got != nil || len(f.kills()) != 3 {
		t.Fatalf("a round with no pod left evicted %v (%d kills)", got, len(f.kills()))
	}
}

// round is one monitoring interval later; it returns the pod evicted, if
// one was (a round that evicts more fails the test).
func round(m *Manager, f *fakeNode) *v1.Pod {
	f.clock.Step(MonitoringInterval)
	evicted := m.synchronize(context.Background())
	switch len(evicted) {
	case 0:
		return nil
	case 1:
		return evicted[0]
	}
	panic(fmt.Sprintf("%d pods evicted in one round", len(evicted)))
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

func hasEvent(events []string, prefix, object string) bool {
	for _, e := range events {
		if strings.HasPrefix(e, prefix) && strings.Contains(e, object) {
			return true
		}
	}
	return false
}

// TestPressureTransitionPeriod: a condition stays for the transition
// period after its signal cleared, then goes; evictions stop at once.
func TestPressureTransitionPeriod(t *testing.T) {
	f := newFakeNode()
	diskPods(f)
	m, _ := newTestManager(t, f, DefaultEvictionHard)
	f.set(func() { f.fsAvail = 3 << 20 })
	round(m, f)
	f.set(func() { f.fsAvail = 40 << 20 })
	if got := round(m, f); got != nil {
		t.Errorf("evicted %v once the signal cleared", got.Name)
	}
	f.clock.Step(DefaultPressureTransitionPeriod - 3*MonitoringInterval - time.Second)
	round(m, f)
	if !m.IsUnderDiskPressure() {
		t.Error("DiskPressure cleared before the transition period")
	}
	f.clock.Step(time.Second)
	round(m, f)
	if m.IsUnderDiskPressure() || len(m.Pressure()) != 0 {
		t.Errorf("pressure %v after the transition period", m.Pressure())
	}
	if len(f.kills()) != 1 {
		t.Errorf("%d kills; want 1", len(f.kills()))
	}
}

// TestMemoryAndPIDPressure: memory.available under 100Mi ranks by memory,
// pid.available (when configured) reports PIDPressure.
func TestMemoryAndPIDPressure(t *testing.T) {
	f := newFakeNode()
	q := resource.MustParse
	burstable := newPod("burstable", defaultPriority, []v1.Container{newContainer("burstable", newResourceList("", "100Mi", ""), nil)}, nil)
	bestEffort := newPod("best-effort", defaultPriority, []v1.Container{newContainer("best-effort", nil, nil)}, nil)
	guaranteed := newPod("guaranteed", defaultPriority, []v1.Container{newContainer("guaranteed", newResourceList("1", "2Gi", ""), newResourceList("1", "2Gi", ""))}, nil)
	f.pods = []*v1.Pod{guaranteed, burstable, bestEffort}
	f.podStats[burstable.UID] = newPodMemoryStats(burstable, q("300Mi"))
	f.podStats[bestEffort.UID] = newPodMemoryStats(bestEffort, q("100Mi"))
	f.podStats[guaranteed.UID] = newPodMemoryStats(guaranteed, q("1Gi"))
	for uid, ps := range f.podStats {
		ps.Containers[0].Memory = ps.Memory // the pod's one container uses it all
		f.podStats[uid] = ps
	}
	hard := map[string]string{"memory.available": "100Mi", "pid.available": "10%"}
	m, _ := newTestManager(t, f, hard)
	f.set(func() { f.memAvail = 50 << 20 })
	if got := round(m, f); got != burstable {
		t.Fatalf("evicted %v; want the Burstable pod furthest over its request", got)
	}
	k := f.kills()[0]
	if !strings.HasPrefix(k.status.Message, "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container burstable was using 300Mi, request is 100Mi") {
		t.Errorf("message %q", k.status.Message)
	}
	if !m.IsUnderMemoryPressure() || m.IsUnderPIDPressure() {
		t.Errorf("pressure %v", m.Pressure())
	}
	f.set(func() { f.memAvail = 2 << 30; f.procs = 32000 })
	round(m, f)
	if got := m.Pressure(); len(got) != 2 || got[0] != v1.NodeMemoryPressure || got[1] != v1.NodePIDPressure {
		t.Errorf("pressure %v; want memory (in its transition period) and PID", got)
	}
}

// TestCriticalPodsAreNotEvicted: static and system-critical pods are
// skipped; the next pod in rank goes.
func TestCriticalPodsAreNotEvicted(t *testing.T) {
	f := newFakeNode()
	filler, quiet, _ := diskPods(f)
	filler.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
	critical := int32(systemCriticalPriority)
	quiet.Spec.Priority = &critical
	m, _ := newTestManager(t, f, DefaultEvictionHard)
	f.set(func() { f.fsAvail = 1 << 20 })
	if got := round(m, f); got == nil || got == filler || got == quiet {
		t.Fatalf("evicted %v; want the guaranteed pod, critical ones skipped", got)
	}
}

// TestAdmitUnderNodeConditions is the kubelet's: under memory pressure
// only BestEffort pods are refused (unless they tolerate it), under disk
// pressure every pod but critical ones.
func TestAdmitUnderNodeConditions(t *testing.T) {
	f := newFakeNode()
	m, _ := newTestManager(t, f, DefaultEvictionHard)
	bestEffort := newPod("best-effort", defaultPriority, []v1.Container{newContainer("c", nil, nil)}, nil)
	burstable := newPod("burstable", defaultPriority, []v1.Container{newContainer("c", newResourceList("100m", "100Mi", ""), nil)}, nil)
	tolerating := newPod("tolerating", defaultPriority, []v1.Container{newContainer("c", nil, nil)}, nil)
	tolerating.Spec.Tolerations = []v1.Toleration{{Key: v1.TaintNodeMemoryPressure, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}
	static := newPod("static", defaultPriority, []v1.Container{newContainer("c", nil, nil)}, nil)
	static.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
	check := func(state string, want map[*v1.Pod]bool) {
		t.Helper()
		for pod, admit := range want {
			ok, reason, msg := m.Admit(pod)
			if ok != admit {
				t.Errorf("%s: %s admitted %v; want %v", state, pod.Name, ok, admit)
			}
			if !ok && (reason != "Evicted" || !strings.HasPrefix(msg, "The node had condition: [")) {
				t.Errorf("%s: refused with %q %q", state, reason, msg)
			}
		}
	}
	check("no pressure", map[*v1.Pod]bool{bestEffort: true, burstable: true, tolerating: true, static: true})
	f.set(func() { f.memAvail = 50 << 20 })
	round(m, f)
	check("memory pressure", map[*v1.Pod]bool{bestEffort: false, burstable: true, tolerating: true, static: true})
	f.set(func() { f.fsAvail = 1 << 20 })
	round(m, f)
	check("memory and disk pressure", map[*v1.Pod]bool{bestEffort: false, burstable: false, tolerating: false, static: true})
}

// TestStartWaitsForCleanup: after an eviction the loop waits for the pod
// to be cleaned up before the next round, then runs it at once.
func TestStartWaitsForCleanup(t *testing.T) {
	f := newFakeNode()
	filler, quiet, _ := diskPods(f)
	f.fsAvail = 1 << 20
	m, _ := newTestManager(t, f, DefaultEvictionHard)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.Start(ctx, MonitoringInterval)
	polltest.Eventually(t, 10*time.Second, "the first eviction", func() bool { return len(f.kills()) == 1 })
	polltest.Eventually(t, 10*time.Second, "the clean-up wait", f.clock.HasWaiters)
	for i := 0; i < 5; i++ {
		f.clock.Step(podCleanupPollFreq)
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(f.kills()); n != 1 {
		t.Fatalf("%d kills while the evicted pod was not cleaned up", n)
	}
	f.set(func() { f.cleanedUp[filler.UID] = true })
	polltest.Eventually(t, 10*time.Second, "the next round", func() bool {
		f.clock.Step(podCleanupPollFreq)
		return len(f.kills()) == 2
	})
	if k := f.kills()[1]; k.pod != quiet {
		t.Errorf("second eviction took %s", k.pod.Name)
	}
}

// TestLocalStorageLimits: without node pressure, a pod over its emptyDir
// sizeLimit, its pod-level or a container's ephemeral-storage limit is
// evicted with the kubelet's message; the pods' usage is read only when
// some pod has such a limit.
func TestLocalStorageLimits(t *testing.T) {
	f := newFakeNode()
	q := resource.MustParse
	limit := q("10Mi")
	emptyDir := newPod("emptydir", defaultPriority, []v1.Container{newContainer("c", nil, nil)},
		[]v1.Volume{newVolume("data", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{SizeLimit: &limit}})})
	container := newPod("container", defaultPriority, []v1.Container{newContainer("c", nil, newResourceList("", "", "5Mi"))}, nil)
	within := newPod("within", defaultPriority, []v1.Container{newContainer("c", nil, newResourceList("", "", "1Gi"))},
		[]v1.Volume{newVolume("data", v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{SizeLimit: &limit}})})
	f.pods = []*v1.Pod{emptyDir, container, within}
	f.podStats[emptyDir.UID] = newPodDiskStats(emptyDir, q("0"), q("0"), q("11Mi"))
	f.podStats[container.UID] = newPodDiskStats(container, q("1Mi"), q("6Mi"), q("0"))
	f.podStats[within.UID] = newPodDiskStats(within, q("1Mi"), q("1Mi"), q("9Mi"))
	m, _ := newTestManager(t, f, DefaultEvictionHard)
	f.clock.Step(MonitoringInterval)
	evicted := m.synchronize(context.Background())
	if len(evicted) != 2 || evicted[0] != emptyDir || evicted[1] != container {
		t.Fatalf("evicted %v; want the pods over their limits", podNames(evicted))
	}
	kills := f.kills()
	if kills[0].status.Message != `Usage of EmptyDir volume "data" exceeds the limit "10Mi". ` ||
		kills[1].status.Message != `Container c exceeded its local ephemeral storage limit "5Mi". ` {
		t.Errorf("messages %q, %q", kills[0].status.Message, kills[1].status.Message)
	}
	if m.IsUnderDiskPressure() || len(kills[0].status.Conditions) != 0 || kills[0].grace != 1 {
		t.Errorf("pressure %v, conditions %v, grace %d", m.Pressure(), kills[0].status.Conditions, kills[0].grace)
	}
	if hasStorageLimits(newPod("plain", 0, []v1.Container{newContainer("c", newResourceList("1", "1Gi", "1Gi"), nil)}, nil)) {
		t.Error("a pod with requests only counts as limited")
	}
}
