package framework

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
)

// poll calls cond every 100 ms (backing off to 1 s) until it returns true or the timeout passes. With
// stopOnErr an error from cond ends the wait at once; otherwise it is kept as the reason for a timeout.
func poll(timeout time.Duration, cond func() (bool, error), stopOnErr bool) error {
	deadline := time.Now().Add(timeout)
	interval := 100 * time.Millisecond
	var last error
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		if err != nil {
			if stopOnErr {
				return err
			}
			last = err
		}
		if time.Now().After(deadline) {
			if last != nil {
				return fmt.Errorf("timed out after %v: %w", timeout, last)
			}
			return fmt.Errorf("timed out after %v", timeout)
		}
		time.Sleep(interval)
		if interval < time.Second {
			interval += interval / 2
		}
	}
}

// Eventually polls cond until it returns true; after the timeout it fails the test with what and the
// last error cond returned (errors do not end the wait).
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	if err := poll(timeout, cond, false); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// NodeReady tells whether the node's Ready condition is True.
func NodeReady(n *v1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// WaitForNodeReady waits until the node exists and is Ready.
func WaitForNodeReady(t testing.TB, name string, timeout time.Duration) *v1.Node {
	t.Helper()
	c := Get(t)
	var node *v1.Node
	Eventually(t, timeout, "node "+name+" Ready", func() (bool, error) {
		n, err := c.Client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		node = n
		return NodeReady(n), nil
	})
	return node
}

// WaitForPod polls the pod until cond holds and returns it; on timeout the test fails with the pod's
// status and events.
func WaitForPod(t testing.TB, ns, name string, timeout time.Duration, cond func(*v1.Pod) bool) *v1.Pod {
	t.Helper()
	c := Get(t)
	var pod *v1.Pod
	err := poll(timeout, func() (bool, error) {
		p, err := c.Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pod = p
		return cond(p), nil
	}, false)
	if err != nil {
		t.Fatalf("waiting for pod %s/%s: %v\n%s", ns, name, err, DescribePod(ns, name))
	}
	return pod
}

// WaitForPodPhase waits until the pod reaches phase.
func WaitForPodPhase(t testing.TB, ns, name string, phase v1.PodPhase, timeout time.Duration) *v1.Pod {
	t.Helper()
	return WaitForPod(t, ns, name, timeout, func(p *v1.Pod) bool { return p.Status.Phase == phase })
}

// WaitForPodReady waits until the pod's Ready condition is True.
func WaitForPodReady(t testing.TB, ns, name string, timeout time.Duration) *v1.Pod {
	t.Helper()
	return WaitForPod(t, ns, name, timeout, PodReady)
}

// PodReady tells whether the pod's Ready condition is True.
func PodReady(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// WaitForPodGone waits until the pod object no longer exists.
func WaitForPodGone(t testing.TB, ns, name string, timeout time.Duration) {
	t.Helper()
	c := Get(t)
	err := poll(timeout, func() (bool, error) {
		_, err := c.Client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	}, false)
	if err != nil {
		t.Fatalf("waiting for pod %s/%s to be gone: %v\n%s", ns, name, err, DescribePod(ns, name))
	}
}

// DescribePod renders the pod's status and its events, for failure messages.
func DescribePod(ns, name string) string {
	c := cluster
	if c == nil {
		return ""
	}
	ctx := context.Background()
	var b strings.Builder
	p, err := c.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		fmt.Fprintf(&b, "pod %s/%s: %v\n", ns, name, err)
	} else {
		fmt.Fprintf(&b, "pod %s/%s uid=%s node=%q phase=%s reason=%q message=%q deletionTimestamp=%v\n",
			ns, name, p.UID, p.Spec.NodeName, p.Status.Phase, p.Status.Reason, p.Status.Message, p.DeletionTimestamp)
		for _, cd := range p.Status.Conditions {
			fmt.Fprintf(&b, "  condition %s=%s %s %s\n", cd.Type, cd.Status, cd.Reason, cd.Message)
		}
		for _, cs := range append(append([]v1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
			fmt.Fprintf(&b, "  container %s ready=%v restarts=%d state=%s last=%s\n",
				cs.Name, cs.Ready, cs.RestartCount, containerState(cs.State), containerState(cs.LastTerminationState))
		}
		describeBackend(&b, p.UID)
	}
	evs, err := c.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.name", name).String(),
	})
	if err == nil {
		sort.Slice(evs.Items, func(i, j int) bool { return evs.Items[i].LastTimestamp.Before(&evs.Items[j].LastTimestamp) })
		for _, e := range evs.Items {
			fmt.Fprintf(&b, "  event %s %s x%d (%s): %s\n", e.Type, e.Reason, e.Count, e.Source.Component, e.Message)
		}
	}
	return b.String()
}

func containerState(s v1.ContainerState) string {
	switch {
	case s.Waiting != nil:
		return fmt.Sprintf("Waiting(%s: %s)", s.Waiting.Reason, s.Waiting.Message)
	case s.Running != nil:
		return fmt.Sprintf("Running(since %s)", s.Running.StartedAt.Format(time.RFC3339))
	case s.Terminated != nil:
		return fmt.Sprintf("Terminated(%s, exit %d: %s)", s.Terminated.Reason, s.Terminated.ExitCode, s.Terminated.Message)
	}
	return "-"
}

// Namespace creates a namespace for the test, waits for its default ServiceAccount (pods are refused
// until it exists) and deletes the namespace at cleanup.
func Namespace(t testing.TB) string {
	t.Helper()
	c := Get(t)
	ctx := context.Background()
	ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: UniqueName(t, "e2e")}}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace: %v", err)
	}
	t.Cleanup(func() {
		err := c.Client.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Logf("delete namespace %s: %v", ns.Name, err)
		}
	})
	Eventually(t, 60*time.Second, "ServiceAccount default in "+ns.Name, func() (bool, error) {
		_, err := c.Client.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	})
	return ns.Name
}

// Busybox is a container running command in the test image (pull policy IfNotPresent).
func Busybox(name string, command ...string) v1.Container {
	return v1.Container{Name: name, Image: BusyboxImage, ImagePullPolicy: v1.PullIfNotPresent, Command: command}
}

// Toleration tolerates runlet's taint.
func Toleration() v1.Toleration {
	return v1.Toleration{Key: TaintKey, Operator: v1.TolerationOpEqual, Value: TaintValue, Effect: v1.TaintEffectNoSchedule}
}

// Sleeper is a busybox container that runs until it gets SIGTERM and then
// exits at once, as a well-behaved server does; with the default 30 s grace
// period its pod is deleted promptly.
func Sleeper(name string) v1.Container {
	return Busybox(name, "sh", "-c", "trap 'exit 0' TERM; sleep 3600 & wait")
}

// PodFor builds a pod that the scheduler places on the given runlet node: nodeSelector
// type=virtual-kubelet + kubernetes.io/hostname=<node>, and the toleration for runlet's taint.
// The grace period is the default one (30 s), as users get it.
func PodFor(node, ns, name string, containers ...v1.Container) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}},
		Spec: v1.PodSpec{
			NodeSelector:  map[string]string{NodeSelectorKey: NodeSelectorValue, "kubernetes.io/hostname": node},
			Tolerations:   []v1.Toleration{Toleration()},
			Containers:    containers,
			RestartPolicy: v1.RestartPolicyAlways,
		},
	}
}

// CreatePod creates the pod and returns what the API stored.
func CreatePod(t testing.TB, pod *v1.Pod) *v1.Pod {
	t.Helper()
	p, err := Get(t).Client.CoreV1().Pods(pod.Namespace).Create(context.Background(), pod, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s/%s: %v", pod.Namespace, pod.Name, err)
	}
	return p
}

// DeletePod deletes the pod with the given grace period (nil: the pod's own); NotFound is fine.
func DeletePod(t testing.TB, ns, name string, grace *int64) {
	t.Helper()
	err := Get(t).Client.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: grace})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("delete pod %s/%s: %v", ns, name, err)
	}
}

// Kubectl runs kubectl with the admin kubeconfig and returns stdout; a failure fails the test.
func Kubectl(t testing.TB, args ...string) string {
	t.Helper()
	out, err := KubectlE(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// KubectlE runs kubectl with the admin kubeconfig (an explicit --kubeconfig in args wins) and returns
// stdout; the error carries stderr.
func KubectlE(args ...string) (string, error) { return KubectlStdin("", args...) }

// KubectlStdin is KubectlE with stdin (e.g. `apply -f -`).
func KubectlStdin(stdin string, args ...string) (string, error) {
	c := cluster
	if c == nil {
		return "", errors.New("framework: no control plane (TestMain must call framework.Main)")
	}
	cmd := exec.Command(c.Kubectl, args...)
	cmd.Env = append(cmd.Environ(), "KUBECONFIG="+c.AdminKubeconfig)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}
