package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
)

// TestHostNetworkPodEnv: a host-network pod's IPs are the node's, in its
// status and in the downward-API environment of its containers.
func TestHostNetworkPodEnv(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	pod := framework.PodFor(rl.NodeName, ns, "hostnet", framework.Busybox("main", "sh", "-c",
		`echo "pod=$POD_IP host=$HOST_IP"; exec sleep 3600`))
	pod.Spec.TerminationGracePeriodSeconds = nil
	pod.Spec.HostNetwork = true
	field := func(path string) *v1.EnvVarSource {
		return &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: path}}
	}
	pod.Spec.Containers[0].Env = []v1.EnvVar{
		{Name: "POD_IP", ValueFrom: field("status.podIP")},
		{Name: "HOST_IP", ValueFrom: field("status.hostIP")},
	}
	framework.CreatePod(t, pod)
	p := framework.WaitForPodPhase(t, ns, pod.Name, v1.PodRunning, 90*time.Second)
	if p.Status.PodIP == "" || p.Status.PodIP != p.Status.HostIP {
		t.Errorf("status podIP %q hostIP %q: a host-network pod has the node's IP", p.Status.PodIP, p.Status.HostIP)
	}
	want := fmt.Sprintf("pod=%s host=%s\n", p.Status.HostIP, p.Status.HostIP)
	framework.Eventually(t, 30*time.Second, "the container's env in its log", func() (bool, error) {
		out, err := framework.KubectlE("logs", "-n", ns, pod.Name)
		if err == nil && out != want {
			err = fmt.Errorf("log %q, want %q", out, want)
		}
		return err == nil, err
	})
}
