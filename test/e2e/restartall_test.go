package e2e

import (
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
)

// TestRestartAllContainers: a container that exits by a restart rule's
// RestartAllContainers action restarts the whole pod in place, as the v1.37
// kubelet does (the upstream "should restart all containers on regular
// container exit"): the init container, the sidecar and both regular
// containers run again, each counted as restarted once with a last state,
// the pod keeps its sandbox (the emptyDir's file survives, so the second
// run does not exit again), and it never fails, for all its restartPolicy
// Never.
func TestRestartAllContainers(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	always, never := v1.ContainerRestartPolicyAlways, v1.ContainerRestartPolicyNever
	workdir := []v1.VolumeMount{{Name: "workdir", MountPath: "/mnt"}}
	source := framework.Busybox("source", "sh", "-c", "if [ -f /mnt/restart-complete ]; then sleep 10000; else touch /mnt/restart-complete; exit 42; fi")
	source.RestartPolicy, source.VolumeMounts = &never, workdir
	source.RestartPolicyRules = []v1.ContainerRestartRule{{
		Action:    v1.ContainerRestartRuleActionRestartAllContainers,
		ExitCodes: &v1.ContainerRestartRuleOnExitCodes{Operator: v1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{42}},
	}}
	sidecar := framework.Sleeper("sidecar")
	sidecar.RestartPolicy = &always
	pod := framework.PodFor(rl.NodeName, ns, "restart-all", source, framework.Sleeper("regular"))
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	pod.Spec.InitContainers = []v1.Container{framework.Busybox("init", "sh", "-c", "exit 0"), sidecar}
	pod.Spec.Volumes = []v1.Volume{{Name: "workdir", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
	framework.CreatePod(t, pod)

	p := framework.WaitForPod(t, ns, "restart-all", 3*time.Minute, func(p *v1.Pod) bool {
		all := append(append([]v1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
		if len(all) != 4 {
			return false
		}
		for _, cs := range all {
			if cs.RestartCount == 0 || cs.LastTerminationState.Terminated == nil {
				return false
			}
		}
		return p.Status.Phase == v1.PodRunning && framework.PodReady(p)
	})
	for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		if cs.RestartCount != 1 {
			t.Errorf("%s restarted %d times; want once", cs.Name, cs.RestartCount)
		}
	}
	if c := condition(p, v1.AllContainersRestarting); c == nil || c.Status != v1.ConditionFalse {
		t.Errorf("AllContainersRestarting %+v; want False once restarted", c)
	}
	// It restarts once: the source's first exit is not taken for a second.
	time.Sleep(10 * time.Second)
	p = framework.WaitForPodReady(t, ns, "restart-all", time.Minute)
	for _, cs := range p.Status.ContainerStatuses {
		if cs.RestartCount != 1 || cs.State.Running == nil {
			t.Errorf("%s: restarts %d, running %v; want 1, running", cs.Name, cs.RestartCount, cs.State.Running != nil)
		}
	}
	if !hasEvent(t, ns, "restart-all", "Killing", "restarted with all the pod's containers") {
		t.Error("no Killing event for the containers stopped by the restart")
	}
}
