package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestStatusReconciled: runlet sends a status again when the API shows
// something else than it last sent (an update dropped after its retries,
// lost in an outage, or overwritten), as the kubelet's status manager does;
// a status the API already shows is not sent again and again.
func TestStatusReconciled(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	pods := framework.Get(t).Client.CoreV1().Pods(ns)
	framework.CreatePod(t, framework.PodFor(rl.NodeName, ns, "p", framework.Busybox("c", "sleep", "3600")))
	p := framework.WaitForPodReady(t, ns, "p", 90*time.Second)

	time.Sleep(25 * time.Second) // two reconcile rounds on a settled pod
	if n := strings.Count(rl.Log(), "written again"); n != 0 {
		t.Errorf("a settled status was written again %d times", n)
	}

	stale := p.DeepCopy()
	stale.Status.Phase = v1.PodPending
	stale.Status.ContainerStatuses[0].Ready = false
	for i := range stale.Status.Conditions {
		if stale.Status.Conditions[i].Type == v1.PodReady {
			stale.Status.Conditions[i].Status = v1.ConditionFalse
		}
	}
	if _, err := pods.UpdateStatus(context.Background(), stale, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("overwrite the status: %v", err)
	}
	framework.WaitForPod(t, ns, "p", 30*time.Second, func(p *v1.Pod) bool {
		return p.Status.Phase == v1.PodRunning && framework.PodReady(p)
	})
}
