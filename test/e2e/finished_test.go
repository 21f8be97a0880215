package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
)

// TestFinishedPodSurvivesRestart: a pod that completed keeps its container
// and its log across a restart of runlet (SIGKILL), as a finished Job's pod
// does on a kubelet, and both go once the pod is deleted.
func TestFinishedPodSurvivesRestart(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	pod := framework.PodFor(rl.NodeName, ns, "job", framework.Busybox("main", "sh", "-c", "echo job-output; exit 0"))
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	created := framework.CreatePod(t, pod)
	framework.WaitForPodPhase(t, ns, pod.Name, v1.PodSucceeded, 90*time.Second)

	rl.Kill()
	rl.Start()
	time.Sleep(10 * time.Second) // a few housekeeping rounds after the sources were seen
	if n := len(framework.Containers(t, created.UID)); n == 0 {
		t.Fatalf("the finished pod's container was removed after the restart")
	}
	if out := framework.Kubectl(t, "logs", "-n", ns, pod.Name); !strings.Contains(out, "job-output") {
		t.Errorf("kubectl logs after the restart = %q; want the job's output", out)
	}
	p := framework.WaitForPodPhase(t, ns, pod.Name, v1.PodSucceeded, 10*time.Second)
	if rc := p.Status.ContainerStatuses[0].RestartCount; rc != 0 {
		t.Errorf("restartCount %d after the restart; the container must not run again", rc)
	}

	framework.DeletePod(t, ns, pod.Name, nil)
	framework.WaitForPodGone(t, ns, pod.Name, 60*time.Second)
	framework.Eventually(t, 60*time.Second, "the deleted pod's backend objects removed", func() (bool, error) {
		return len(framework.Sandboxes(t, created.UID)) == 0, nil
	})
}
