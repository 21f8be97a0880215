package e2e

import (
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestFaultPodmanPodRemoved removes a pod's podman pod behind runlet's back
// (`podman pod rm -f`). Under restartPolicy Always the pod gets a new sandbox
// with a SandboxChanged event, and its container's restart count goes on from
// where it was; under Never nothing runs again (the finished container is not
// re-run) and the pod fails, its running container killed, as on the kubelet.
func TestFaultPodmanPodRemoved(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)

	always := framework.CreatePod(t, framework.PodFor(rl.NodeName, ns, "always", framework.Sleeper("main")))
	never := framework.PodFor(rl.NodeName, ns, "never", framework.Busybox("done", "true"), framework.Sleeper("run"))
	never.Spec.RestartPolicy = v1.RestartPolicyNever
	never = framework.CreatePod(t, never)
	framework.WaitForPodPhase(t, ns, "always", v1.PodRunning, 90*time.Second)
	framework.WaitForPod(t, ns, "never", 90*time.Second, func(p *v1.Pod) bool {
		return len(p.Status.ContainerStatuses) == 2 && p.Status.ContainerStatuses[0].State.Terminated != nil &&
			p.Status.ContainerStatuses[1].State.Running != nil
	})

	removePodmanPod(t, always.UID)
	removePodmanPod(t, never.UID)

	framework.WaitForPod(t, ns, "always", 90*time.Second, func(p *v1.Pod) bool {
		cs := p.Status.ContainerStatuses[0]
		return p.Status.Phase == v1.PodRunning && cs.State.Running != nil && cs.RestartCount >= 1
	})
	framework.Eventually(t, 30*time.Second, "SandboxChanged event", func() (bool, error) {
		return hasEvent(t, ns, "always", "SandboxChanged", "Pod sandbox changed"), nil
	})

	p := framework.WaitForPodPhase(t, ns, "never", v1.PodFailed, 90*time.Second)
	if done := p.Status.ContainerStatuses[0]; done.State.Terminated == nil || done.State.Terminated.ExitCode != 0 {
		t.Errorf("done = %+v; want its exit 0 kept", done.State)
	}
	// Killed with the pod: the exit podman reported, or, if the container
	// went before runlet saw it exit, the kubelet's ContainerStatusUnknown.
	run := p.Status.ContainerStatuses[1]
	last := run.State.Terminated
	if last == nil {
		last = run.LastTerminationState.Terminated
	}
	if last == nil || last.ExitCode != 137 {
		t.Errorf("run = %+v; want it ended with exit 137", run)
	}
	if pods, ctrs := framework.PodmanPods(t, never.UID), framework.PodContainers(t, never.UID); len(pods)+len(ctrs) != 0 {
		t.Errorf("podman pods %v containers %v of the Never pod; want none: nothing runs again", pods, ctrs)
	}
}

func removePodmanPod(t *testing.T, uid types.UID) {
	t.Helper()
	pods := framework.PodmanPods(t, uid)
	if len(pods) != 1 {
		t.Fatalf("podman pods of %s: %v; want one", uid, pods)
	}
	framework.PodmanCLI(t, "pod", "rm", "-f", "-t", "0", pods[0].ID)
}
