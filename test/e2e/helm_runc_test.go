package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestHelmInstallRunc installs the chart as a fleet of runc hosts would: runtime: runc in perHost mode,
// a DaemonSet whose pod on each host registers <release>-<host> and runs that node's pods with the runc
// and conmon of its image, on the host's kernel, with no podman. Here the one host is node A (a runlet on
// this machine's podman, as a host's kubelet would run the DaemonSet's pod); host mode differs only in
// the workload's kind and the node's name, which the chart's tests check. The images come as an
// air-gapped host gets them: `runlet image load` on the host into the node's store, through the socket
// of the runlet in the pod. Then runlet's pod is deleted, as an upgrade or an evicted pod would have it:
// its workloads keep running, untouched, and the DaemonSet's next pod serves them.
func TestHelmInstallRunc(t *testing.T) {
	t.Parallel()
	c := framework.Get(t)
	a := framework.StartRunlet(t, framework.RunletOptions{Runtime: "podman"})
	framework.MakeImage(t)
	framework.SharedHostDir(t, hostStateDir)
	ns := framework.Namespace(t)
	rel := framework.UniqueName(t, "r")
	nodeName := rel + "-" + a.NodeName
	root := filepath.Join(hostStateDir, nodeName)
	install(t, c, ns, rel, nodeName, pinValues(t, a.NodeName), "runtime=runc", "mode=perHost")
	node := waitForReleaseNode(t, ns, rel, nodeName)
	checkRunletPod(t, ns, rel, a.NodeName)
	if v := node.Status.NodeInfo.ContainerRuntimeVersion; !strings.HasPrefix(v, "runc://") {
		t.Errorf("node %s's container runtime is %q; want runc://<version>", nodeName, v)
	}
	framework.LoadRuncImages(t, framework.RunletBinary(t), root)

	web := deployOnto(t, ns, "web", nodeName)
	before := checkLogsExecToken(t, ns, web)
	ctrs := checkRuncContainer(t, root, before.UID, nodeName)

	// runlet's pod goes; the DaemonSet makes another once it has ended, which takes the node back.
	restartRunletPod(t, ns, rel)
	checkRunletPod(t, ns, rel, a.NodeName)
	after := checkLogsExecToken(t, ns, web)
	if was, now := before.Status.ContainerStatuses[0], after.Status.ContainerStatuses[0]; now.ContainerID != was.ContainerID ||
		now.RestartCount != 0 || now.State.Running == nil {
		t.Errorf("pod %s across runlet's restart: container %s (restarts %d, %+v), before %s; want it untouched",
			web, now.ContainerID, now.RestartCount, now.State, was.ContainerID)
	}
	if now := checkRuncContainer(t, root, before.UID, nodeName); now.ID != ctrs.ID || now.PID != ctrs.PID {
		t.Errorf("pod %s's runc container across runlet's restart: %s pid %d, before %s pid %d", web, now.ID, now.PID, ctrs.ID, ctrs.PID)
	}
	// A pod made by the new runlet: its mounts (root filesystem, token tmpfs) reach runc as before.
	second := deployOnto(t, ns, "second", nodeName)
	p := checkLogsExecToken(t, ns, second)

	// helm uninstall: the pods are stopped and their containers removed, runlet stops, the node goes.
	framework.Helm(t, "uninstall", rel, "--namespace", ns, "--wait", "--timeout", "5m")
	if _, err := c.Client.CoreV1().Nodes().Get(context.Background(), nodeName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("node %s after helm uninstall: %v; want it deleted", nodeName, err)
	}
	for _, uid := range []types.UID{before.UID, p.UID} {
		if left := framework.RuncContainers(t, root, uid); len(left) > 0 {
			t.Errorf("helm uninstall left pod %s's runc containers: %+v", uid, left)
		}
	}
	if left, _ := os.ReadDir(filepath.Join(root, "runc", "state")); len(left) > 0 {
		t.Errorf("helm uninstall left %d containers in runc's state", len(left))
	}
}

// checkRuncContainer: the pod's one container runs in the runc store of the node's root, owned by it.
func checkRuncContainer(t *testing.T, root string, uid types.UID, node string) framework.BackendContainer {
	t.Helper()
	ctrs := framework.RuncContainers(t, root, uid)
	if len(ctrs) != 1 || !ctrs[0].Running || ctrs[0].Labels[framework.LabelOwner] != node {
		t.Fatalf("pod %s's runc containers under %s: %+v; want one running, owned by %s", uid, root, ctrs, node)
	}
	return ctrs[0]
}

// restartRunletPod deletes the release's runlet pod with its grace period and waits for the next one to
// be Ready: serving its node's kubelet API again.
func restartRunletPod(t *testing.T, ns, release string) {
	t.Helper()
	old := runletPods(t, ns, release)[0]
	if err := framework.Get(t).Client.CoreV1().Pods(ns).Delete(context.Background(), old.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		pods := runletPods(t, ns, release)
		if len(pods) == 1 && pods[0].Name != old.Name && framework.PodReady(&pods[0]) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new Ready runlet pod of %s 3m after %s's deletion; its pods:\n%s", release, old.Name, describeRunletPods(ns, pods))
		}
		time.Sleep(time.Second)
	}
}
