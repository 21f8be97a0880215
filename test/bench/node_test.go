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

// node is the runlet under test and what the scenarios need around it: the
// API namespace its pods go to, the watch marking their progress, and the
// podman service it runs them on.
type node struct {
	t   *testing.T
	ctx context.Context
	cfg config
	rl  *framework.Runlet
	be  *podman.Backend
	c   *libpod.Client
	ns  string
	api corev1.PodInterface
	w   *marks
}

// createE creates a busybox `sleep 3600` pod that never restarts.
func (n *node) createE(name string) (time.Time, *v1.Pod, error) {
	p := framework.PodFor(n.rl.NodeName, n.ns, name, framework.Busybox("c", "sleep", "3600"))
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

// createMany creates count pods named prefix-<i> from cfg.clients clients at once.
func (n *node) createMany(prefix string, count int) (time.Time, []*v1.Pod) {
	pods := make([]*v1.Pod, count)
	t0 := time.Now()
	err := parallel(n.cfg.clients, count, func(i int) (err error) {
		_, pods[i], err = n.createE(fmt.Sprintf("%s-%d", prefix, i))
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

// gone deletes pods (grace 0) and waits until the API and podman have
// forgotten them. The wait grows with the number of pods: runlet removes
// them from podman one by one, in no particular order, and a busy podman
// service takes seconds for each.
func (n *node) gone(pods []*v1.Pod) {
	for _, p := range pods {
		deletePod(n.t, n.ctx, n.api, p.Name)
	}
	deadline := time.Now().Add(2*time.Minute + time.Duration(len(pods))*3*time.Second)
	for _, p := range pods {
		n.wait("gone", p.Name, time.Until(deadline))
		waitClean(n.t, n.ctx, n.c, p, time.Until(deadline))
	}
}

func (n *node) sleepSettle() { time.Sleep(n.cfg.settle) }
