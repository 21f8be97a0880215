package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestReadinessGates: Ready follows spec.readinessGates, whose conditions
// others set in the API, and runlet's own status writes keep them (and a
// DisruptionTarget) instead of wiping them.
func TestReadinessGates(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	const gate1, gate2 = "example.com/gate-1", "example.com/gate-2"
	c := framework.Busybox("main", "sleep", "3600")
	c.ReadinessProbe = fastProbe(execProbe("cat", "/tmp/ready"))
	pod := userPod(rl.NodeName, ns, "gated", c)
	pod.Spec.ReadinessGates = []v1.PodReadinessGate{{ConditionType: gate1}, {ConditionType: gate2}}
	framework.CreatePod(t, pod)
	kubectlExecWhenRunning(t, ns, pod.Name, "touch", "/tmp/ready")

	// Containers ready, gates missing: not Ready, with the kubelet's reason.
	framework.WaitForPod(t, ns, pod.Name, 60*time.Second, func(p *v1.Pod) bool {
		c := condition(p, v1.PodReady)
		return c != nil && condStatus(p, v1.ContainersReady) == v1.ConditionTrue && c.Status == v1.ConditionFalse &&
			c.Reason == "ReadinessGatesNotReady" && strings.Contains(c.Message, `"`+gate1+`" does not exist`)
	})

	setCondition(t, ns, pod.Name, gate1, v1.ConditionTrue)
	// runlet took the change: the message now names only the second gate.
	framework.WaitForPod(t, ns, pod.Name, 30*time.Second, func(p *v1.Pod) bool {
		c := condition(p, v1.PodReady)
		return c != nil && c.Status == v1.ConditionFalse && !strings.Contains(c.Message, gate1) && strings.Contains(c.Message, gate2)
	})
	setCondition(t, ns, pod.Name, gate2, v1.ConditionTrue)
	framework.WaitForPodReady(t, ns, pod.Name, 30*time.Second)

	// runlet writes a status (readiness fails) and keeps the others' conditions.
	setCondition(t, ns, pod.Name, string(v1.DisruptionTarget), v1.ConditionTrue)
	kubectlExec(t, ns, pod.Name, "main", "rm", "/tmp/ready")
	p := framework.WaitForPod(t, ns, pod.Name, 30*time.Second, func(p *v1.Pod) bool {
		return condStatus(p, v1.ContainersReady) == v1.ConditionFalse
	})
	for _, typ := range []v1.PodConditionType{gate1, gate2, v1.DisruptionTarget} {
		// (The disruption controller may turn a DisruptionTarget of a pod
		// that is not being deleted False: its presence is what counts.)
		if c := condition(p, typ); c == nil || (typ != v1.DisruptionTarget && c.Status != v1.ConditionTrue) {
			t.Fatalf("condition %s lost in runlet's status write\n%s", typ, framework.DescribePod(ns, pod.Name))
		}
	}
	kubectlExec(t, ns, pod.Name, "main", "touch", "/tmp/ready")
	framework.WaitForPodReady(t, ns, pod.Name, 30*time.Second)

	setCondition(t, ns, pod.Name, gate1, v1.ConditionFalse)
	framework.WaitForPod(t, ns, pod.Name, 30*time.Second, func(p *v1.Pod) bool {
		c := condition(p, v1.PodReady)
		return c != nil && c.Status == v1.ConditionFalse && c.Reason == "ReadinessGatesNotReady"
	})
}

// TestStatusWritesKeepMetadata: runlet's status writes carry the status
// alone, as the kubelet's do. A finalizer removed and a label changed by
// others while the pod runs stay as they set them through runlet's next
// status write.
func TestStatusWritesKeepMetadata(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	c := framework.Busybox("main", "sleep", "3600")
	c.ReadinessProbe = fastProbe(execProbe("cat", "/tmp/ready"))
	pod := userPod(rl.NodeName, ns, "meta", c)
	pod.Finalizers = []string{"example.com/hold"}
	if pod.Labels == nil {
		pod.Labels = map[string]string{}
	}
	pod.Labels["stage"] = "one"
	framework.CreatePod(t, pod)
	pods := framework.Get(t).Client.CoreV1().Pods(ns)
	patch := func(p string) error {
		_, err := pods.Patch(context.Background(), pod.Name, types.MergePatchType, []byte(p), metav1.PatchOptions{})
		return err
	}
	// The namespace's deletion waits for the finalizer, if a write brought it back.
	t.Cleanup(func() { _ = patch(`{"metadata":{"finalizers":null}}`) })
	kubectlExecWhenRunning(t, ns, pod.Name, "touch", "/tmp/ready")
	framework.WaitForPodReady(t, ns, pod.Name, 60*time.Second)

	if err := patch(`{"metadata":{"finalizers":null,"labels":{"stage":"two"}}}`); err != nil {
		t.Fatalf("patch the pod's metadata: %v", err)
	}
	// runlet writes a status: readiness fails.
	kubectlExec(t, ns, pod.Name, "main", "rm", "/tmp/ready")
	p := framework.WaitForPod(t, ns, pod.Name, 30*time.Second, func(p *v1.Pod) bool {
		return condStatus(p, v1.ContainersReady) == v1.ConditionFalse
	})
	if len(p.Finalizers) != 0 || p.Labels["stage"] != "two" {
		t.Fatalf("after runlet's status write: finalizers %v, label stage=%q; want none, two", p.Finalizers, p.Labels["stage"])
	}
}

// setCondition patches a pod condition as a controller would.
func setCondition(t *testing.T, ns, name, typ string, st v1.ConditionStatus) {
	t.Helper()
	patch := fmt.Sprintf(`{"status":{"conditions":[{"type":%q,"status":%q}]}}`, typ, st)
	_, err := framework.Get(t).Client.CoreV1().Pods(ns).Patch(context.Background(), name,
		types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}, "status")
	if err != nil {
		t.Fatalf("patch condition %s: %v", typ, err)
	}
}

// kubectlExecWhenRunning waits for the pod to run, then runs cmd in its first container.
func kubectlExecWhenRunning(t *testing.T, ns, pod string, cmd ...string) {
	t.Helper()
	p := framework.WaitForPodPhase(t, ns, pod, v1.PodRunning, 90*time.Second)
	kubectlExec(t, ns, pod, p.Spec.Containers[0].Name, cmd...)
}
