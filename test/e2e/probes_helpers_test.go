package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// testServerImage is built by hack/images-testserver.sh (test/images/testserver).
const testServerImage = framework.TestServerImage

// testServer is a container serving HTTP on 8080 (named "http"), HTTPS on
// 8443 and gRPC health on 5000 (named "grpc"); args go to the server.
func testServer(name string, args ...string) v1.Container {
	return v1.Container{
		Name: name, Image: testServerImage, ImagePullPolicy: v1.PullIfNotPresent,
		Args: args,
		Ports: []v1.ContainerPort{
			{Name: "http", ContainerPort: 8080}, {Name: "https", ContainerPort: 8443}, {Name: "grpc", ContainerPort: 5000},
		},
	}
}

// userPod is framework.PodFor with what a user gets by default: the 30 s
// termination grace period.
func userPod(node, ns, name string, containers ...v1.Container) *v1.Pod {
	p := framework.PodFor(node, ns, name, containers...)
	p.Spec.TerminationGracePeriodSeconds = nil
	return p
}

// sigtermSleeper is a busybox container that exits at once on SIGTERM (a
// plain sleep as PID 1 would ignore it and use up the grace period).
func sigtermSleeper(name string) v1.Container {
	return framework.Busybox(name, "sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait")
}

func execProbe(cmd ...string) v1.ProbeHandler {
	return v1.ProbeHandler{Exec: &v1.ExecAction{Command: cmd}}
}

func httpProbe(path string, port intstr.IntOrString) v1.ProbeHandler {
	return v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: path, Port: port}}
}

// fastProbe probes every second and acts on the first result.
func fastProbe(h v1.ProbeHandler) *v1.Probe {
	return &v1.Probe{ProbeHandler: h, PeriodSeconds: 1, FailureThreshold: 1, TimeoutSeconds: 5}
}

// waitForEvent waits for an event of the pod with reason whose message contains text.
func waitForEvent(t *testing.T, ns, pod, reason, text string, timeout time.Duration) {
	t.Helper()
	framework.Eventually(t, timeout, "event "+reason+" "+text+" on "+pod, func() (bool, error) {
		return hasEvent(t, ns, pod, reason, text), nil
	})
}

// kubectlExec runs cmd in the pod's container through runlet's kubelet API.
func kubectlExec(t *testing.T, ns, pod, container string, cmd ...string) string {
	t.Helper()
	return framework.Kubectl(t, append([]string{"-n", ns, "exec", pod, "-c", container, "--"}, cmd...)...)
}

// waitForLog waits until the container's log contains text.
func waitForLog(t *testing.T, ns, pod, container, text string, timeout time.Duration) {
	t.Helper()
	framework.Eventually(t, timeout, "log of "+pod+"/"+container+" containing "+text, func() (bool, error) {
		out, err := framework.KubectlE("-n", ns, "logs", pod, "-c", container)
		return err == nil && strings.Contains(out, text), nil
	})
}

// condition returns the pod's condition of type typ, if any.
func condition(p *v1.Pod, typ v1.PodConditionType) *v1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func containerStatus(p *v1.Pod, name string) *v1.ContainerStatus {
	for i := range p.Status.ContainerStatuses {
		if p.Status.ContainerStatuses[i].Name == name {
			return &p.Status.ContainerStatuses[i]
		}
	}
	return nil
}

func getPod(t *testing.T, ns, name string) *v1.Pod {
	t.Helper()
	p, err := framework.Get(t).Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get pod %s/%s: %v", ns, name, err)
	}
	return p
}

// runningUnready is a running pod whose Ready condition is False.
func runningUnready(p *v1.Pod) bool {
	c := condition(p, v1.PodReady)
	return p.Status.Phase == v1.PodRunning && c != nil && c.Status == v1.ConditionFalse
}

// condStatus is the status of the pod's condition typ, "" if it has none.
func condStatus(p *v1.Pod, typ v1.PodConditionType) v1.ConditionStatus {
	if c := condition(p, typ); c != nil {
		return c.Status
	}
	return ""
}
