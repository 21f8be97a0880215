package nodeshutdown

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// pod is a pod of the given priority (nil: none) and grace period (nil: none).
func pod(name string, priority *int32, grace *int64) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name), Generation: 3},
		Spec:       v1.PodSpec{Priority: priority, TerminationGracePeriodSeconds: grace},
	}
}

// kill is one KillPod call the fake node received.
type kill struct {
	pod    string
	grace  int64
	status func(*v1.PodStatus)
}

// fakeNode is the sync loop behind the manager: it records each kill and
// holds it until the test releases the pod (or all of them).
type fakeNode struct {
	mu       sync.Mutex
	notReady bool
	pods     []*v1.Pod
	kills    []kill
	release  map[string]chan struct{}
	released map[string]bool
}

func newFakeNode(pods ...*v1.Pod) *fakeNode {
	n := &fakeNode{pods: pods, release: map[string]chan struct{}{}, released: map[string]bool{}}
	for _, p := range pods {
		n.release[p.Name] = make(chan struct{})
	}
	return n
}

func (n *fakeNode) activePods() []*v1.Pod {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]*v1.Pod(nil), n.pods...)
}

func (n *fakeNode) ready() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return !n.notReady
}

// admit makes the node run p, as the loop does after a restart.
func (n *fakeNode) admit(p *v1.Pod) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.pods, n.notReady = append(n.pods, p), false
	n.release[p.Name] = make(chan struct{})
}

func (n *fakeNode) killPod(ctx context.Context, p *v1.Pod, grace int64, status func(*v1.PodStatus)) error {
	n.mu.Lock()
	n.kills = append(n.kills, kill{pod: p.Name, grace: grace, status: status})
	ch := n.release[p.Name]
	n.mu.Unlock()
	select {
	case <-ch:
		n.mu.Lock()
		n.released[p.Name] = true
		n.mu.Unlock()
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (n *fakeNode) cleanedUp(p *v1.Pod) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.released[p.Name]
}

// stop lets the pod's kill return.
func (n *fakeNode) stop(name string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	close(n.release[name])
}

// killed are the pods killed so far, in order, with their grace periods.
func (n *fakeNode) killed() []kill {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]kill(nil), n.kills...)
}

func (n *fakeNode) names() map[string]int64 {
	out := map[string]int64{}
	for _, k := range n.killed() {
		out[k.pod] = k.grace
	}
	return out
}

// newManager is a manager of the two groups (regular, critical) over node.
func newManager(t *testing.T, node *fakeNode, regular, critical time.Duration) (*Manager, *clocktesting.FakeClock, *record.FakeRecorder) {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Now())
	rec := record.NewFakeRecorder(10)
	m := New(Config{
		Periods: Periods(regular+critical, critical, nil),
		Ready:   node.ready, ActivePods: node.activePods, KillPod: node.killPod, PodCleanedUp: node.cleanedUp,
		Recorder: rec, NodeRef: &v1.ObjectReference{Kind: "Node", Name: "n"},
		Log: logrus.NewEntry(logrus.New()), Clock: clk,
	})
	return m, clk, rec
}

func critical() *int32 { return ptr.To[int32](systemCriticalPriority) }
