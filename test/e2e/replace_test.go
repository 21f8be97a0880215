package e2e

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPodReplacedWithSameName re-creates a pod under the same name with an
// identical spec right after a force delete, as `kubectl replace --force`
// and StatefulSets do: the new pod (a new UID) must run, and the old one's
// containers must go. runlet is paused meanwhile, so it learns of the delete
// and the create at once, as after a slow watch or a reconnect.
func TestPodReplacedWithSameName(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	c := framework.Get(t).Client
	pod := framework.PodFor(rl.NodeName, ns, "web-0", framework.Busybox("c", "sleep", "3600"))
	old := framework.CreatePod(t, pod)
	framework.WaitForPodPhase(t, ns, pod.Name, v1.PodRunning, 90*time.Second)

	if err := rl.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			_ = rl.Signal(syscall.SIGCONT)
		}
	}()
	zero := int64(0)
	framework.DeletePod(t, ns, pod.Name, &zero)
	framework.Eventually(t, 30*time.Second, "old pod gone from the API", func() (bool, error) {
		p, err := c.CoreV1().Pods(ns).Get(context.Background(), pod.Name, metav1.GetOptions{})
		return err != nil || p.UID != old.UID, nil
	})
	replacement := framework.CreatePod(t, pod.DeepCopy())
	resumed = true
	if err := rl.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	p := framework.WaitForPod(t, ns, pod.Name, 90*time.Second, func(p *v1.Pod) bool {
		return p.UID == replacement.UID && p.Status.Phase == v1.PodRunning
	})
	if p.UID == old.UID {
		t.Fatalf("the API still shows the old pod")
	}
	framework.Eventually(t, 60*time.Second, "old pod's backend objects removed", func() (bool, error) {
		return len(framework.Sandboxes(t, old.UID)) == 0, nil
	})
	if n := len(framework.Sandboxes(t, replacement.UID)); n != 1 {
		t.Errorf("replacement has %d sandboxes in the backend, want 1", n)
	}
}
