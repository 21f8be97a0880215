package main

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/runlet/runlet/internal/admission/predicate"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// admit runs the kubelet's admit handlers on a new pod, in its order: the
// eviction manager's (node pressure), then the general predicates against
// the node and the pods it runs (host ports, node affinity, OS, taints).
func (c *core) admit(p *v1.Pod) (bool, string, string) {
	if ok, reason, msg := c.eviction.Admit(p); !ok {
		return ok, reason, msg
	}
	others := c.loop.ActivePods()
	r := predicate.Admit(p, c.node.get(), others)
	if r.Reason == predicate.ReasonNodeAffinity {
		// The node's labels may have changed since: ask the API once more,
		// as the kubelet does before it refuses a pod for its affinity.
		r = predicate.Admit(p, c.node.fetch(), others)
	}
	return r.Admit, r.Reason, r.Message
}

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
