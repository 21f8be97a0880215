package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// TestPods runs the foundation's pod scenarios against one runlet node.
func TestPods(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{AutoPodman: true})
	ns := framework.Namespace(t)
	node := rl.NodeName
	t.Run("ScheduledPodRunsInPodman", func(t *testing.T) { t.Parallel(); testRunning(t, node, ns) })
	t.Run("Deployment", func(t *testing.T) { t.Parallel(); testDeployment(t, node, ns) })
	t.Run("ExitCodes", func(t *testing.T) { t.Parallel(); testExitCodes(t, node, ns) })
	t.Run("MissingImage", func(t *testing.T) { t.Parallel(); testMissingImage(t, node, ns) })
	t.Run("EnvAndMissingConfigMap", func(t *testing.T) { t.Parallel(); testEnv(t, node, ns) })
	t.Run("Delete", func(t *testing.T) { t.Parallel(); testDelete(t, node, ns) })
}

func testRunning(t *testing.T, node, ns string) {
	pod := framework.PodFor(node, ns, "running", framework.Busybox("main", "sleep", "3600"))
	created := framework.CreatePod(t, pod)
	got := framework.WaitForPodPhase(t, ns, pod.Name, v1.PodRunning, 90*time.Second)
	if got.Spec.NodeName != node {
		t.Fatalf("scheduled to %q, want %q", got.Spec.NodeName, node)
	}
	if got.Status.PodIP == "" || len(got.Status.PodIPs) == 0 || got.Status.HostIP == "" || got.Status.StartTime == nil {
		t.Fatalf("status lacks podIP/hostIP/startTime: %+v", got.Status)
	}
	for _, ct := range []v1.PodConditionType{v1.PodScheduled, v1.PodInitialized, v1.ContainersReady, v1.PodReady} {
		if !conditionTrue(got, ct) {
			t.Errorf("condition %s not True: %+v", ct, got.Status.Conditions)
		}
	}
	cs := got.Status.ContainerStatuses
	if len(cs) != 1 || cs[0].State.Running == nil || !strings.HasPrefix(cs[0].ContainerID, framework.RuntimePrefix()) || cs[0].ImageID == "" {
		t.Fatalf("container status: %+v", cs)
	}
	id := strings.TrimPrefix(cs[0].ContainerID, framework.RuntimePrefix())
	var found bool
	for _, c := range framework.Containers(t, created.UID) {
		if c.ID == id {
			found = c.Running
		}
	}
	if !found {
		t.Fatalf("container %s is not running in the backend", id)
	}
}

func conditionTrue(p *v1.Pod, ct v1.PodConditionType) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == ct {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

func testDeployment(t *testing.T, node, ns string) {
	c := framework.Get(t)
	tmpl := framework.PodFor(node, ns, "web", framework.Sleeper("web"))
	replicas := int32(3)
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: tmpl.Labels},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: tmpl.Labels}, Spec: tmpl.Spec},
		},
	}
	if _, err := c.Client.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create deployment: %v", err)
	}
	framework.Eventually(t, 120*time.Second, "3 Running replicas", func() (bool, error) {
		pods, err := c.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err
		}
		running := 0
		for _, p := range pods.Items {
			if p.Status.Phase == v1.PodRunning && p.Spec.NodeName == node && p.DeletionTimestamp == nil {
				running++
			}
		}
		return running == 3, nil
	})
	_ = c.Client.AppsV1().Deployments(ns).Delete(context.Background(), "web", metav1.DeleteOptions{})
}

func testExitCodes(t *testing.T, node, ns string) {
	for _, tc := range []struct {
		code  int
		phase v1.PodPhase
	}{{0, v1.PodSucceeded}, {3, v1.PodFailed}} {
		pod := framework.PodFor(node, ns, fmt.Sprintf("exit-%d", tc.code), framework.Busybox("main", "sh", "-c", fmt.Sprintf("exit %d", tc.code)))
		pod.Spec.RestartPolicy = v1.RestartPolicyNever
		framework.CreatePod(t, pod)
		got := framework.WaitForPodPhase(t, ns, pod.Name, tc.phase, 90*time.Second)
		term := got.Status.ContainerStatuses[0].State.Terminated
		if term == nil || int(term.ExitCode) != tc.code {
			t.Fatalf("pod %s: terminated state %+v, want exit code %d", pod.Name, term, tc.code)
		}
		if tc.code != 0 && term.Reason != "Error" {
			t.Errorf("pod %s: reason %q, want Error", pod.Name, term.Reason)
		}
	}
}

func testMissingImage(t *testing.T, node, ns string) {
	pod := framework.PodFor(node, ns, "noimage", v1.Container{Name: "main", Image: "registry.invalid/runlet/nope:1", ImagePullPolicy: v1.PullIfNotPresent})
	seen := watchWaitingReasons(t, ns, pod.Name, "ErrImagePull", "ImagePullBackOff")
	framework.CreatePod(t, pod)
	select {
	case <-seen:
	case <-time.After(120 * time.Second):
		t.Fatalf("did not see both ErrImagePull and ImagePullBackOff\n%s", framework.DescribePod(ns, pod.Name))
	}
	p := framework.WaitForPod(t, ns, pod.Name, 10*time.Second, func(*v1.Pod) bool { return true })
	if p.Status.Phase != v1.PodPending {
		t.Errorf("phase %s, want Pending", p.Status.Phase)
	}
	framework.Eventually(t, 30*time.Second, "pull failure event", func() (bool, error) {
		return hasEvent(t, ns, pod.Name, "Failed", "Failed to pull image"), nil
	})
}

// testEnv: a container whose env needs a configMap that does not exist waits
// with CreateContainerConfigError and an event naming it, and starts once the
// configMap is created; its env then holds the configMap's value, the
// downward API's fields and the $(VAR) expansion of its command.
func testEnv(t *testing.T, node, ns string) {
	pod := framework.PodFor(node, ns, "envpod", framework.Busybox("main", "sh", "-c",
		`echo "mode=$MODE ip=$POD_IP node=$NODE name=$POD_NAME greet=$(GREETING)"; exec sleep 3600`))
	field := func(path string) *v1.EnvVarSource {
		return &v1.EnvVarSource{FieldRef: &v1.ObjectFieldSelector{FieldPath: path}}
	}
	pod.Spec.Containers[0].Env = []v1.EnvVar{
		{Name: "MODE", ValueFrom: &v1.EnvVarSource{ConfigMapKeyRef: &v1.ConfigMapKeySelector{
			LocalObjectReference: v1.LocalObjectReference{Name: "envcfg"}, Key: "MODE"}}},
		{Name: "POD_IP", ValueFrom: field("status.podIP")},
		{Name: "NODE", ValueFrom: field("spec.nodeName")},
		{Name: "POD_NAME", ValueFrom: field("metadata.name")},
		{Name: "GREETING", Value: "hi"},
	}
	seen := watchWaitingReasons(t, ns, pod.Name, "CreateContainerConfigError")
	framework.CreatePod(t, pod)
	select {
	case <-seen:
	case <-time.After(90 * time.Second):
		t.Fatalf("no CreateContainerConfigError\n%s", framework.DescribePod(ns, pod.Name))
	}
	p := framework.WaitForPod(t, ns, pod.Name, 10*time.Second, func(*v1.Pod) bool { return true })
	if w := p.Status.ContainerStatuses[0].State.Waiting; p.Status.Phase != v1.PodPending || w == nil ||
		!strings.Contains(w.Message, `configmap "envcfg" not found`) {
		t.Errorf("phase %s, waiting %+v; want Pending, a message naming the configMap", p.Status.Phase, w)
	}
	framework.Eventually(t, 30*time.Second, "an event naming the configMap", func() (bool, error) {
		return hasEvent(t, ns, pod.Name, "Failed", `configmap "envcfg" not found`), nil
	})

	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "envcfg", Namespace: ns}, Data: map[string]string{"MODE": "fast"}}
	if _, err := framework.Get(t).Client.CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p = framework.WaitForPodPhase(t, ns, pod.Name, v1.PodRunning, 90*time.Second)
	want := fmt.Sprintf("mode=fast ip=%s node=%s name=envpod greet=hi\n", p.Status.PodIP, node)
	framework.Eventually(t, 30*time.Second, "the container's env in its log", func() (bool, error) {
		out, err := framework.KubectlE("logs", "-n", ns, pod.Name)
		return out == want, err
	})
}

// watchWaitingReasons watches the pod from before it exists and closes the
// returned channel once every reason was seen as a container waiting reason:
// a transient reason would slip through polling.
func watchWaitingReasons(t *testing.T, ns, name string, reasons ...string) <-chan struct{} {
	w, err := framework.Get(t).Client.CoreV1().Pods(ns).Watch(context.Background(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String(),
	})
	if err != nil {
		t.Fatalf("watch pod: %v", err)
	}
	t.Cleanup(w.Stop)
	done := make(chan struct{})
	go func() {
		want := map[string]bool{}
		for _, r := range reasons {
			want[r] = true
		}
		for ev := range w.ResultChan() {
			p, ok := ev.Object.(*v1.Pod)
			if !ok {
				continue
			}
			for _, cs := range p.Status.ContainerStatuses {
				if cs.State.Waiting != nil {
					delete(want, cs.State.Waiting.Reason)
				}
			}
			if len(want) == 0 {
				close(done)
				return
			}
		}
	}()
	return done
}

// hasEvent reports a kubelet's event about the pod (source=kubelet, as the
// upstream e2e suite selects them) with the reason and a message that
// contains the text.
func hasEvent(t *testing.T, ns, pod, reason, contains string) bool {
	for _, e := range podEvents(t, ns, pod) {
		if e.Reason == reason && strings.Contains(e.Message, contains) {
			return true
		}
	}
	return false
}

func testDelete(t *testing.T, node, ns string) {
	pod := framework.PodFor(node, ns, "deleteme", framework.Sleeper("main"))
	created := framework.CreatePod(t, pod)
	framework.WaitForPodPhase(t, ns, pod.Name, v1.PodRunning, 90*time.Second)
	framework.DeletePod(t, ns, pod.Name, nil)
	framework.WaitForPodGone(t, ns, pod.Name, 60*time.Second)
	framework.Eventually(t, 30*time.Second, "the backend's sandbox removed", func() (bool, error) {
		return len(framework.Sandboxes(t, created.UID)) == 0 && len(framework.Containers(t, created.UID)) == 0, nil
	})
}
