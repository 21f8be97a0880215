package kubelet

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/runlet/runlet/internal/admission/predicate"
	"github.com/runlet/runlet/internal/syncloop"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// admitHandler is one of the kubelet's pod admit handlers: it may refuse a
// new pod with a reason and a message.
type admitHandler func(*v1.Pod) (ok bool, reason, message string)

// admitHandlers are the kubelet's admit handlers, in its order: the
// eviction manager's (node pressure), the general predicates against the
// node and the pods it runs (host ports, node affinity, OS, taints), then
// the node shutdown manager's (no pod while the node shuts down).
func (k *Kubelet) admitHandlers(loop *loopRef) []admitHandler {
	return []admitHandler{k.eviction.Admit, k.predicates(loop.ActivePods), k.shutdown.Admit}
}

// admitAll runs handlers in order; the first refusal is the answer.
func admitAll(handlers []admitHandler) func(*v1.Pod) (bool, string, string) {
	return func(p *v1.Pod) (bool, string, string) {
		for _, h := range handlers {
			if ok, reason, msg := h(p); !ok {
				return ok, reason, msg
			}
		}
		return true, "", ""
	}
}

// predicates checks a pod against the node and the pods it runs.
func (k *Kubelet) predicates(active func() []*v1.Pod) admitHandler {
	return func(p *v1.Pod) (bool, string, string) {
		others := active()
		r := predicate.Admit(p, k.node.get(), others)
		if r.Reason == predicate.ReasonNodeAffinity {
			// The node's labels may have changed since: ask the API once more,
			// as the kubelet does before it refuses a pod for its affinity.
			r = predicate.Admit(p, k.node.fetch(), others)
		}
		return r.Admit, r.Reason, r.Message
	}
}

// loopRef is the sync loop as its admit handlers and eviction reach it.
// The loop takes the admit handlers when it is built, and they (eviction's
// admission, the predicates' active pods, eviction's kills) need the loop:
// loopRef is that one cycle, made explicit and bound by New once the loop
// exists, before anything runs.
type loopRef struct{ loop *syncloop.Loop }

func (r *loopRef) bind(l *syncloop.Loop) { r.loop = l }

// ActivePods are the pods the loop admitted whose containers may still run.
func (r *loopRef) ActivePods() []*v1.Pod { return r.loop.ActivePods() }

// KillPod stops a pod through its worker (eviction's and node shutdown's kills).
func (r *loopRef) KillPod(ctx context.Context, pod *v1.Pod, o syncloop.KillPodOptions) error {
	return r.loop.KillPod(ctx, pod, o)
}

// SourcesHandled reports that the loop has admitted the first snapshot of
// every source: after a restart, the pods the node runs are its again.
func (r *loopRef) SourcesHandled(sources []string) bool {
	for _, s := range sources {
		if !r.loop.SourceHandled(s) {
			return false
		}
	}
	return true
}

// PodCleanedUp reports a killed pod's resources released.
func (r *loopRef) PodCleanedUp(uid types.UID) bool { return r.loop.PodCleanedUp(uid) }

// admitNode is the node as admission sees it: the object runlet registered,
// refreshed from the API when a decision depends on labels it may lack.
type admitNode struct {
	client kubernetes.Interface
	node   atomic.Pointer[v1.Node]
}

func newAdmitNode(client kubernetes.Interface, registered *v1.Node) *admitNode {
	n := &admitNode{client: client}
	n.node.Store(registered.DeepCopy())
	return n
}

func (n *admitNode) get() *v1.Node { return n.node.Load() }

// fetch reads the node from the API; on failure the known one serves.
func (n *admitNode) fetch() *v1.Node {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cur := n.node.Load()
	fresh, err := n.client.CoreV1().Nodes().Get(ctx, cur.Name, metav1.GetOptions{})
	if err != nil {
		return cur
	}
	n.node.Store(fresh)
	return fresh
}
