package e2e

import (
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
)

// TestPodOSRejection: a pod for another OS (spec.os, or its kubernetes.io/os
// label) is rejected at admission as the kubelet does: phase Failed with the
// kubelet's reason and an event, and no container is created for it.
func TestPodOSRejection(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	byField := framework.PodFor(rl.NodeName, ns, "os-field", framework.Busybox("c", "sleep", "3600"))
	byField.Spec.NodeName, byField.Spec.NodeSelector = rl.NodeName, nil // as the upstream spec: bound, no scheduler
	byField.Spec.OS = &v1.PodOS{Name: v1.Windows}
	byLabel := framework.PodFor(rl.NodeName, ns, "os-label", framework.Busybox("c", "sleep", "3600"))
	byLabel.Spec.NodeName, byLabel.Spec.NodeSelector = rl.NodeName, nil
	byLabel.Labels[v1.LabelOSStable] = "windows"

	for pod, reason := range map[*v1.Pod]string{byField: "PodOSNotSupported", byLabel: "PodOSSelectorNodeLabelDoesNotMatch"} {
		created := framework.CreatePod(t, pod)
		got := framework.WaitForPod(t, ns, pod.Name, 60*time.Second, func(p *v1.Pod) bool { return p.Status.Phase == v1.PodFailed })
		if got.Status.Reason != reason || got.Status.Message == "" {
			t.Errorf("%s: status reason %q message %q, want reason %s", pod.Name, got.Status.Reason, got.Status.Message, reason)
		}
		framework.Eventually(t, 30*time.Second, "event "+reason, func() (bool, error) {
			return hasEvent(t, ns, pod.Name, reason, "doesn't match"), nil
		})
		if sbs, cs := framework.Sandboxes(t, created.UID), framework.Containers(t, created.UID); len(sbs)+len(cs) != 0 {
			t.Errorf("%s: rejected pod has %d sandboxes and %d containers in the backend", pod.Name, len(sbs), len(cs))
		}
	}
}
