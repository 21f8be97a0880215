package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1 "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/runlet/runlet/internal/runtime/podman"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
	"github.com/runlet/runlet/test/e2e/framework"
)

// The node agents the bench compares, each with what runs its pods: the table's columns.
const (
	kindPodman  = "podman"  // runlet on podman
	kindRunc    = "runc"    // runlet on runc
	kindKubelet = "kubelet" // the kubelet on containerd + runc
)

var kinds = []string{kindPodman, kindRunc, kindKubelet}

// node is one node under test and what the scenarios need around it: the
// API namespace its pods go to, the watch marking their progress, and its
// agent: a runlet (on the bench's podman service, or on runc) or the kubelet.
type node struct {
	t    *testing.T
	ctx  context.Context
	cfg  config
	kind string
	name string            // the Node's
	rl   *framework.Runlet // runlet on podman or runc
	be   *podman.Backend   // runlet on podman: the service it runs on
	c    *libpod.Client
	kl   *kubeletNode // the kubelet
	ns   string
	api  corev1.PodInterface
	w    *marks
}

// newNode gives the node a namespace of its own, watched.
func newNode(t *testing.T, ctx context.Context, cfg config, kind, name string) *node {
	ns := framework.Namespace(t)
	return &node{t: t, ctx: ctx, cfg: cfg, kind: kind, name: name, ns: ns,
		api: framework.Get(t).Client.CoreV1().Pods(ns), w: watchPods(t, ns)}
}

// pod is a pod for the node with the containers: runlet's nodes are
// selected by their label and taint too, the kubelet's by its name only.
func (n *node) pod(name string, containers ...v1.Container) *v1.Pod {
	p := framework.PodFor(n.name, n.ns, name, containers...)
	if n.kind == kindKubelet {
		delete(p.Spec.NodeSelector, framework.NodeSelectorKey)
	}
	return p
}

// createE creates a busybox `sleep 3600` pod that never restarts.
func (n *node) createE(name string) (time.Time, *v1.Pod, error) {
	p := n.pod(name, framework.Busybox("c", "sleep", "3600"))
	p.Spec.RestartPolicy = v1.RestartPolicyNever
	t0 := time.Now()
	created, err := n.api.Create(n.ctx, p, metav1.CreateOptions{})
	return t0, created, err
}

func (n *node) create(name string) (time.Time, *v1.Pod) {
	t0, p, err := n.createE(name)
	if err != nil {
		n.t.Fatalf("create pod %s: %v", name, err)
	}
	return t0, p
}

// wait returns when the watch first saw the pod in the state ("running", "ready", "exited", "gone"…).
func (n *node) wait(what, name string, timeout time.Duration) time.Time {
	at, ok := n.w.wait(what+"/"+name, timeout)
	if !ok {
		n.t.Fatalf("pod %s/%s not %s within %v\n%s", n.ns, name, what, timeout, framework.DescribePod(n.ns, name))
	}
	return at
}

// createMany creates count pods from cfg.clients clients at once, named prefix-<i>, each made by
// build (nil: a busybox `sleep 3600` that never restarts).
func (n *node) createMany(prefix string, count int, build func(name string) *v1.Pod) (time.Time, []*v1.Pod) {
	pods := make([]*v1.Pod, count)
	t0 := time.Now()
	err := parallel(n.cfg.clients, count, func(i int) (err error) {
		name := fmt.Sprintf("%s-%d", prefix, i)
		if build == nil {
			_, pods[i], err = n.createE(name)
			return err
		}
		pods[i], err = n.api.Create(n.ctx, build(name), metav1.CreateOptions{})
		return err
	})
	if err != nil {
		n.t.Fatal(err)
	}
	return t0, pods
}

// waitAll returns when the watch has seen every pod in the state, at the last one.
func (n *node) waitAll(what string, pods []*v1.Pod, timeout time.Duration) time.Time {
	var last time.Time
	for _, p := range pods {
		if at := n.wait(what, p.Name, timeout); at.After(last) {
			last = at
		}
	}
	return last
}

// gone deletes pods (grace 0) and waits until the API and the backend have
// forgotten them. The wait grows with the number of pods: a node removes
// them one by one, in no particular order, and a busy podman service takes
// seconds for each.
func (n *node) gone(pods []*v1.Pod) {
	for _, p := range pods {
		deletePod(n.t, n.ctx, n.api, p.Name)
	}
	deadline := time.Now().Add(2*time.Minute + time.Duration(len(pods))*3*time.Second)
	for _, p := range pods {
		n.wait("gone", p.Name, time.Until(deadline))
		n.waitClean(p, time.Until(deadline))
	}
}

// waitClean polls the node's backend until it holds no sandbox of the pod, and returns when that was seen.
func (n *node) waitClean(p *v1.Pod, timeout time.Duration) time.Time {
	deadline := time.Now().Add(timeout)
	for {
		left, err := n.sandboxes(p)
		if err == nil && left == 0 {
			return time.Now()
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("the sandbox of %s is still on node %s after %v (err %v)", p.Name, n.name, timeout, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sandboxes counts the backend's sandboxes of the pod: podman pods, runlet's runc sandboxes, or
// containerd's ready ones (through CRI). runlet removes a deleted pod's sandbox at once.
func (n *node) sandboxes(p *v1.Pod) (int, error) {
	switch n.kind {
	case kindPodman:
		ps, err := n.c.ListPods(n.ctx, labelPodUID+"="+string(p.UID))
		return len(ps), err
	case kindRunc:
		return len(framework.RuncSandboxes(n.t, n.rl.RootDir, p.UID)), nil
	}
	return n.kl.sandboxes(n.ctx, p.UID)
}

func (n *node) sleepSettle() { time.Sleep(n.cfg.settle) }
