package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
)

// TestRuncNode runs a node on the runc backend with the defaults a user
// gets: a pod on the node's pod network, its logs and exec, a restart of
// runlet that restarts nothing, and a delete that leaves nothing behind.
func TestRuncNode(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{Runtime: framework.RuntimeRunc})
	ns := framework.Namespace(t)
	pod := framework.PodFor(rl.NodeName, ns, "web", framework.Busybox("main", "sh", "-c",
		"echo started-on-runc; hostname; exec sleep 3600"))
	framework.CreatePod(t, pod)
	p := framework.WaitForPodReady(t, ns, pod.Name, 90*time.Second)
	node := framework.WaitForNodeReady(t, rl.NodeName, 10*time.Second)
	if ip := net.ParseIP(p.Status.PodIP); ip == nil || !inCIDR(ip, node.Spec.PodCIDR) {
		t.Errorf("pod IP %q; want one of the node's pod CIDR %s", p.Status.PodIP, node.Spec.PodCIDR)
	}
	if out := framework.Kubectl(t, "logs", "-n", ns, pod.Name); !strings.Contains(out, "started-on-runc\n"+pod.Name+"\n") {
		t.Errorf("kubectl logs = %q; want the container's output with the pod's hostname", out)
	}
	if out := kubectlExec(t, ns, pod.Name, "main", "sh", "-c", "echo exec-$((6*7))"); out != "exec-42\n" {
		t.Errorf("kubectl exec = %q; want exec-42", out)
	}
	id := p.Status.ContainerStatuses[0].ContainerID

	rl.Restart()
	time.Sleep(5 * time.Second) // a few sync rounds after the sources were seen
	q := framework.WaitForPodReady(t, ns, pod.Name, 60*time.Second)
	if cs := q.Status.ContainerStatuses[0]; cs.RestartCount != 0 || cs.ContainerID != id {
		t.Errorf("after the restart: container %s, restartCount %d; want %s, 0", cs.ContainerID, cs.RestartCount, id)
	}

	loaded := loadWhileRunning(t, rl)
	c := framework.Busybox("main", "echo", "from-a-loaded-image")
	c.Image, c.ImagePullPolicy = loaded, v1.PullNever
	lp := framework.PodFor(rl.NodeName, ns, "loaded", c)
	lp.Spec.RestartPolicy = v1.RestartPolicyNever
	framework.CreatePod(t, lp)
	framework.WaitForPodPhase(t, ns, lp.Name, v1.PodSucceeded, 90*time.Second)
	if out := framework.Kubectl(t, "logs", "-n", ns, lp.Name); out != "from-a-loaded-image\n" {
		t.Errorf("kubectl logs of the loaded image's pod = %q", out)
	}

	for _, name := range []string{pod.Name, lp.Name} {
		framework.DeletePod(t, ns, name, nil)
		framework.WaitForPodGone(t, ns, name, 90*time.Second)
	}
	framework.Eventually(t, 60*time.Second, "the pod's sandbox and containers removed from the runc root", func() (bool, error) {
		sbs, _ := os.ReadDir(filepath.Join(rl.RootDir, "runc", "s"))
		ctrs, _ := os.ReadDir(filepath.Join(rl.RootDir, "runc", "c"))
		return len(sbs)+len(ctrs) == 0, nil
	})
}

func inCIDR(ip net.IP, cidr string) bool {
	_, n, err := net.ParseCIDR(cidr)
	return err == nil && n.Contains(ip)
}

// loadWhileRunning loads an image under a name the node has never had into
// the running runlet's store with `runlet image load`, and returns the name.
func loadWhileRunning(t *testing.T, rl *framework.Runlet) string {
	t.Helper()
	name := "localhost/runlet/live-load:" + strings.ToLower(rl.NodeName)
	framework.PodmanCLI(t, "tag", framework.BusyboxImage, name)
	defer framework.PodmanCLI(t, "untag", name, name)
	archive := filepath.Join(t.TempDir(), "live.tar")
	framework.PodmanCLI(t, "save", "--format", "docker-archive", "-o", archive, name)
	out, err := exec.Command(rl.Binary, "image", "load", "--root-dir", rl.RootDir, archive).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Loaded image: "+name) {
		t.Fatalf("runlet image load into the running runlet: %v\n%s", err, out)
	}
	return name
}
