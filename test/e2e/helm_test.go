package e2e

import (
	"context"
	"fmt"
	"hash/adler32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// TestHelmInstall runs runlet as users are meant to: `helm install runlet charts/runlet`, runlet in a
// pod, registering a node that workloads reach through a nodeSelector and the toleration. The cluster
// has no real kubelet: runlet A, started as a node outside the cluster, runs the runlet pod on this
// machine's podman, and that pod drives the host's podman at its standard socket (the chart's host mode).
// Apart from the pin to node A and the apiserver address (this control plane listens on 127.0.0.1 only,
// with no kube-proxy), the chart's defaults are used.
func TestHelmInstall(t *testing.T) {
	c := framework.Get(t)
	// 1. the control plane and runlet A, outside the cluster
	a := framework.StartRunlet(t, framework.RunletOptions{})
	// 2. the image, with no registry
	image := framework.MakeImage(t)
	checkImage(t, image)
	framework.HostPodman(t)
	framework.SharedHostDir(t, hostStateDir)
	ns := framework.Namespace(t)
	values := pinValues(t, a.NodeName)

	// 3. helm install, pinned to node A, in host mode
	relB := framework.UniqueName(t, "b")
	install(t, c, ns, relB, relB, values)
	// 4. the runlet pod registers node B (named after the release)
	nodeB := waitForReleaseNode(t, ns, relB, relB)
	checkRunletPod(t, ns, relB, a.NodeName)

	// 5. a Deployment scheduled onto B through its hostname label and the toleration
	web := deployOnto(t, ns, "web", relB)
	// 6. kubectl logs and exec through node B; no CA given by hand
	checkLogsAndExec(t, ns, web, relB)
	checkUserNamespacePod(t, ns, relB)

	// 7. a second release beside the first: its own node, ports and state, nothing shared
	relC := releaseBeside(t, "c", relB)
	install(t, c, ns, relC, relC, values)
	nodeC := waitForReleaseNode(t, ns, relC, relC)
	portB, portC := nodeB.Status.DaemonEndpoints.KubeletEndpoint.Port, nodeC.Status.DaemonEndpoints.KubeletEndpoint.Port
	if portB == portC {
		t.Errorf("both nodes serve the kubelet API on port %d", portB)
	}
	other := deployOnto(t, ns, "other", relC)
	checkLogsAndExec(t, ns, other, relC)
	checkRunletPod(t, ns, relB, a.NodeName) // still running, never restarted by the second release
	checkRunletPod(t, ns, relC, a.NodeName)

	// 8. helm uninstall: the pods on B are stopped, runlet stops, node B goes
	webPod := runningPod(t, ns, "web")
	framework.Helm(t, "uninstall", relB, "--namespace", ns, "--wait", "--timeout", "5m")
	if _, err := c.Client.CoreV1().Nodes().Get(context.Background(), relB, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("node %s after helm uninstall: %v; want it deleted", relB, err)
	}
	if ps := framework.PodmanPodsOwnedBy(t, relB); len(ps) > 0 {
		t.Errorf("helm uninstall left %d podman pods of node %s behind: %+v", len(ps), relB, ps)
	}
	if ctrs := framework.PodContainers(t, webPod.UID); len(ctrs) > 0 {
		t.Errorf("the Deployment's pod on %s still has containers in podman: %+v", relB, ctrs)
	}
	if pods := runletPods(t, ns, relB); len(pods) > 0 {
		t.Errorf("runlet's own pod of release %s outlived the uninstall: %s", relB, pods[0].Name)
	}
	if n := framework.WaitForNodeReady(t, relC, 30*time.Second); n.Spec.Unschedulable {
		t.Errorf("uninstalling %s cordoned %s", relB, relC)
	}
	checkLogsAndExec(t, ns, other, relC)
}

// hostStateDir is the chart's stateDir: each node's state is in <stateDir>/<node> on the host.
const hostStateDir = "/var/lib/runlet"

// checkImage: make image stamped the version and the commit, in the labels and in the binary.
func checkImage(t *testing.T, image string) {
	t.Helper()
	out := framework.PodmanCLI(t, "image", "inspect", "--format",
		`{{index .Labels "org.opencontainers.image.version"}} {{index .Labels "org.opencontainers.image.revision"}}`, image)
	f := strings.Fields(out)
	if len(f) != 2 || !strings.HasSuffix(image, ":"+f[0]) || f[1] == "" || f[1] == "unknown" {
		t.Errorf("image %s labels: %q; want its tag as version and a commit", image, out)
	}
}

// pinValues is all the test changes from the chart's defaults: the runlet pod pinned to node A (the
// chart keeps runlet off virtual nodes by default, and A is one) and the apiserver's address.
func pinValues(t *testing.T, nodeA string) string {
	c := framework.Get(t)
	path := filepath.Join(t.TempDir(), "pin.yaml")
	v := fmt.Sprintf(`# pinned to node %[1]s, a runlet outside the cluster standing for a host with podman
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms:
        - matchExpressions:
            - {key: kubernetes.io/hostname, operator: In, values: [%[1]s]}
tolerations:
  - {key: virtual-kubelet.io/provider, operator: Equal, value: runlet, effect: NoSchedule}
# this control plane listens on 127.0.0.1 only and has no kube-proxy for the kubernetes Service
apiServer:
  host: 127.0.0.1
  port: %[2]d
`, nodeA, c.PortBase+443)
	if err := os.WriteFile(path, []byte(v), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// install helm-installs a release whose runlet registers node and, at cleanup, takes both out again
// whatever state the test left.
func install(t *testing.T, c *framework.Cluster, ns, release, node, values string, set ...string) {
	t.Helper()
	t.Cleanup(func() { uninstallLeftovers(t, c, ns, release, node) })
	args := []string{"install", release, filepath.Join(c.RepoRoot, "charts", "runlet"), "--namespace", ns, "--values", values}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	framework.Helm(t, args...)
}

func uninstallLeftovers(t *testing.T, c *framework.Cluster, ns, release, node string) {
	if _, err := framework.HelmE("status", release, "--namespace", ns); err == nil {
		if _, err := framework.HelmE("uninstall", release, "--namespace", ns, "--wait", "--timeout", "3m"); err != nil {
			t.Logf("cleanup: %v; uninstalling without the hook", err)
			_, _ = framework.HelmE("uninstall", release, "--namespace", ns, "--no-hooks")
		}
	}
	_ = c.Client.CoreV1().Nodes().Delete(context.Background(), node, metav1.DeleteOptions{})
	root := filepath.Join(hostStateDir, node)
	if n := framework.RemovePodmanOwnedBy(node) + framework.RemoveRuncLeftovers(root); n > 0 {
		t.Logf("cleanup: removed %d podman or runc objects of node %s", n, node)
	}
	// The release's runlet ran in a pod: its bridge and NAT rule are the host's to take down, and with
	// runc the cgroups of pods it did not remove.
	if _, err := framework.RemoveNodeNetwork(root, node); err != nil {
		t.Logf("cleanup: %v", err)
	}
	if _, err := framework.RemovePodCgroups(root, node); err != nil {
		t.Logf("cleanup: %v", err)
	}
	framework.UnmountUnder(root)
	_ = os.RemoveAll(root)
}

// waitForReleaseNode waits for the release's runlet pod to register node, Ready; when it does not,
// the pod's state and log say why.
func waitForReleaseNode(t *testing.T, ns, release, node string) *v1.Node {
	t.Helper()
	c := framework.Get(t)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		n, err := c.Client.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
		if err == nil && framework.NodeReady(n) {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("node %s of release %s not Ready after 3m (%v); its runlet pod:\n%s", node, release, err,
				describeRunletPods(ns, runletPods(t, ns, release)))
		}
		time.Sleep(time.Second)
	}
}

// describeRunletPods says what state runlet's pods are in, with the tail of each one's log.
func describeRunletPods(ns string, pods []v1.Pod) string {
	var why strings.Builder
	for _, p := range pods {
		why.WriteString(framework.DescribePod(ns, p.Name))
		logs, _ := framework.KubectlE("logs", "--namespace", ns, p.Name, "--tail", "30")
		why.WriteString("\n--- log:\n" + logs + "\n")
	}
	return why.String()
}

func runletPods(t *testing.T, ns, release string) []v1.Pod {
	t.Helper()
	list, err := framework.Get(t).Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{
		LabelSelector: "app.kubernetes.io/instance=" + release + ",app.kubernetes.io/component=node"})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// checkRunletPod: the release's runlet pod runs on node A, once, never restarted (a port clash or a
// failed start would show as restarts).
func checkRunletPod(t *testing.T, ns, release, nodeA string) {
	t.Helper()
	pods := runletPods(t, ns, release)
	if len(pods) != 1 {
		t.Fatalf("release %s has %d runlet pods; want 1", release, len(pods))
	}
	p := pods[0]
	if p.Spec.NodeName != nodeA || p.Status.Phase != v1.PodRunning {
		t.Fatalf("runlet pod %s: node %q phase %s; want Running on %s\n%s", p.Name, p.Spec.NodeName, p.Status.Phase, nodeA,
			framework.DescribePod(ns, p.Name))
	}
	// Least-privilege RBAC must still be enough: nothing runlet asked the API was refused.
	if logs, err := framework.KubectlE("logs", "--namespace", ns, p.Name); err != nil || strings.Contains(logs, "forbidden") {
		t.Errorf("runlet pod %s's log (%v) has refused API requests:\n%s", p.Name, err, grepLines(logs, "forbidden"))
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.RestartCount > 0 {
			logs, _ := framework.KubectlE("logs", "--namespace", ns, p.Name, "--previous", "--tail", "30")
			t.Errorf("runlet pod %s restarted %d times; its previous log:\n%s", p.Name, cs.RestartCount, logs)
		}
	}
}

// checkUserNamespacePod runs a pod with hostUsers: false on node: runlet in
// its pod attaches the idmapped mounts where the host's podman finds them.
func checkUserNamespacePod(t *testing.T, ns, node string) {
	t.Helper()
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "userns", Namespace: ns},
		Spec: v1.PodSpec{
			NodeSelector:  map[string]string{"kubernetes.io/hostname": node},
			Tolerations:   []v1.Toleration{framework.Toleration()},
			HostUsers:     ptr.To(false),
			RestartPolicy: v1.RestartPolicyNever,
			Containers: []v1.Container{framework.Busybox("main", "sh", "-c",
				"cat /proc/self/uid_map; stat -c %u:%g /var/run/secrets/kubernetes.io/serviceaccount/token")},
		},
	}
	framework.CreatePod(t, pod)
	p := framework.WaitForPod(t, ns, pod.Name, 2*time.Minute, func(p *v1.Pod) bool {
		return p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed
	})
	out := framework.Kubectl(t, "logs", "-n", ns, pod.Name)
	if f := strings.Fields(out); p.Status.Phase != v1.PodSucceeded || len(f) != 4 || f[0] != "0" || f[2] != "65536" || f[3] != "0:0" {
		t.Errorf("a hostUsers: false pod on %s: %s, %q; want root mapped to a range of 65536, its token root's", node, p.Status.Phase, out)
	}
}

// deployOnto creates a one-replica Deployment that lands on node through kubernetes.io/hostname and the
// toleration, with the default grace period, and returns its Running pod's name.
func deployOnto(t *testing.T, ns, name, node string) string {
	t.Helper()
	c := framework.Get(t)
	labels := map[string]string{"app": name}
	ctr := framework.Busybox("main", "sh", "-c", "trap 'exit 0' TERM; echo hello from $(hostname); while sleep 1; do :; done")
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{
					NodeSelector: map[string]string{"kubernetes.io/hostname": node},
					Tolerations:  []v1.Toleration{framework.Toleration()},
					Containers:   []v1.Container{ctr},
				},
			},
		},
	}
	if _, err := c.Client.AppsV1().Deployments(ns).Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pod v1.Pod
	framework.Eventually(t, 2*time.Minute, "a Running pod of Deployment "+name+" on "+node, func() (bool, error) {
		p, ok := findRunning(t, ns, name)
		if ok {
			pod = p
		}
		return ok, nil
	})
	if pod.Spec.NodeName != node {
		t.Fatalf("pod %s runs on %q, not %s", pod.Name, pod.Spec.NodeName, node)
	}
	return pod.Name
}

func findRunning(t *testing.T, ns, app string) (v1.Pod, bool) {
	list, err := framework.Get(t).Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app=" + app})
	if err != nil {
		return v1.Pod{}, false
	}
	for _, p := range list.Items {
		if p.Status.Phase == v1.PodRunning && p.DeletionTimestamp == nil {
			return p, true
		}
	}
	return v1.Pod{}, false
}

func runningPod(t *testing.T, ns, app string) v1.Pod {
	t.Helper()
	p, ok := findRunning(t, ns, app)
	if !ok {
		t.Fatalf("no Running pod of %s", app)
	}
	return p
}

// checkLogsAndExec goes through the apiserver to the node's kubelet API, which verifies the
// apiserver's client certificate against the CA it read from the cluster, and runs in the host's
// podman under the node's owner label.
func checkLogsAndExec(t *testing.T, ns, pod, node string) {
	t.Helper()
	p := checkLogsExecToken(t, ns, pod)
	var owned bool
	for _, ctr := range framework.PodContainers(t, p.UID) {
		owned = owned || ctr.Labels[framework.LabelOwner] == node
	}
	if !owned {
		t.Errorf("pod %s has no podman container owned by node %s", pod, node)
	}
}

// checkLogsExecToken: kubectl logs and exec reach the pod through its node, and its service account
// token volume is mounted in it.
func checkLogsExecToken(t *testing.T, ns, pod string) *v1.Pod {
	t.Helper()
	var logs string
	framework.Eventually(t, 30*time.Second, "kubectl logs "+pod, func() (bool, error) {
		out, err := framework.KubectlE("logs", "--namespace", ns, pod)
		logs = out + fmt.Sprint(err)
		return err == nil && strings.Contains(out, "hello from "), nil
	})
	out, err := framework.KubectlE("exec", "--namespace", ns, pod, "--", "sh", "-c", "echo exec-$((6*7))")
	if err != nil || strings.TrimSpace(out) != "exec-42" {
		t.Errorf("kubectl exec %s: %q, %v (logs were %q)", pod, out, err, logs)
	}
	// The token volume is a tmpfs runlet mounts in its own container: it reaches podman on the host
	// (and runc's containers made after runlet's restart) through the state dir's Bidirectional mount.
	if out, err := framework.KubectlE("exec", "--namespace", ns, pod, "--", "cat", "/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err != nil || out != ns {
		t.Errorf("service account token volume of %s: %q, %v; want the namespace %s", pod, out, err, ns)
	}
	p, err := framework.Get(t).Client.CoreV1().Pods(ns).Get(context.Background(), pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func grepLines(text, word string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// releaseBeside names a release whose default ports differ from those of
// release other: the chart derives them from the name (adler32 mod 50), and
// two names of one offset clash on a host, as the chart's values say.
func releaseBeside(t *testing.T, prefix, other string) string {
	offset := func(name string) uint32 { return adler32.Checksum([]byte(name)) % 50 }
	for {
		if name := framework.UniqueName(t, prefix); offset(name) != offset(other) {
			return name
		}
	}
}
