package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// TestObservedGeneration: every spec update bumps metadata.generation, and
// the status runlet writes says which generation it acted on, on the status
// and on each condition it owns, also after many quick updates (a toleration
// only, which changes nothing in the containers, counts too).
func TestObservedGeneration(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	pods := framework.Get(t).Client.CoreV1().Pods(ns)
	pod := framework.PodFor(rl.NodeName, ns, "gen", framework.Sleeper("c"))
	pod.Spec.ActiveDeadlineSeconds = new(int64)
	*pod.Spec.ActiveDeadlineSeconds = 5000
	framework.CreatePod(t, pod)
	framework.WaitForPod(t, ns, "gen", 90*time.Second, func(p *v1.Pod) bool {
		return framework.PodReady(p) && observed(p, 1)
	})

	const updates = 50
	for i := 0; i < updates; i++ {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			p, err := pods.Get(context.Background(), "gen", metav1.GetOptions{})
			if err != nil {
				return err
			}
			if i%2 == 0 {
				*p.Spec.ActiveDeadlineSeconds--
			} else {
				p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{
					Key: fmt.Sprintf("example.com/t%d", i), Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule})
			}
			_, err = pods.Update(context.Background(), p, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
	}
	p := framework.WaitForPod(t, ns, "gen", 60*time.Second, func(p *v1.Pod) bool {
		return observed(p, 1+updates)
	})
	if !framework.PodReady(p) {
		t.Errorf("the pod is not ready after spec updates that need no restart:\n%s", framework.DescribePod(ns, "gen"))
	}
}

// observed reports whether the pod's status and its kubelet-owned conditions
// all observed generation gen.
func observed(p *v1.Pod, gen int64) bool {
	if p.Generation != gen || p.Status.ObservedGeneration != gen {
		return false
	}
	for _, c := range p.Status.Conditions {
		switch c.Type {
		case v1.PodReadyToStartContainers, v1.PodInitialized, v1.ContainersReady, v1.PodReady, v1.PodScheduled:
			if c.ObservedGeneration != gen {
				return false
			}
		}
	}
	return true
}
