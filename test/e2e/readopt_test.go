package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/poddir"
	"github.com/runlet/runlet/internal/runtime/cgroups"
	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
)

type containerSnapshot struct {
	id      string
	started time.Time
}

// runningPods starts n sleeping pods on the node and returns their
// containers' identity once all run.
func runningPods(t *testing.T, node, ns string, n int) map[string]containerSnapshot {
	for i := 0; i < n; i++ {
		framework.CreatePod(t, framework.PodFor(node, ns, fmt.Sprintf("p%02d", i), framework.Busybox("main", "sleep", "3600")))
	}
	return snapshotPods(t, ns, n)
}

func snapshotPods(t *testing.T, ns string, n int) map[string]containerSnapshot {
	out := map[string]containerSnapshot{}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("p%02d", i)
		p := framework.WaitForPodPhase(t, ns, name, v1.PodRunning, 120*time.Second)
		cs := p.Status.ContainerStatuses[0]
		if cs.State.Running == nil {
			t.Fatalf("pod %s: container not running: %+v", name, cs.State)
		}
		out[name] = containerSnapshot{id: cs.ContainerID, started: cs.State.Running.StartedAt.Time}
	}
	return out
}

// assertUnchanged checks every pod still runs the very same container.
func assertUnchanged(t *testing.T, ns string, before map[string]containerSnapshot) {
	c := framework.Get(t).Client
	for name, want := range before {
		p, err := c.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get %s: %v", name, err)
		}
		cs := p.Status.ContainerStatuses[0]
		switch {
		case p.Status.Phase != v1.PodRunning:
			t.Errorf("pod %s: phase %s, want Running", name, p.Status.Phase)
		case cs.ContainerID != want.id:
			t.Errorf("pod %s: container %s, want the same %s", name, cs.ContainerID, want.id)
		case cs.State.Running == nil || !cs.State.Running.StartedAt.Time.Equal(want.started):
			t.Errorf("pod %s: startedAt changed: %+v, want %v", name, cs.State, want.started)
		case cs.RestartCount != 0:
			t.Errorf("pod %s: restartCount %d, want 0", name, cs.RestartCount)
		}
	}
}

// TestReadoptionAfterSIGKILL kills runlet while 10 pods run, deletes one
// pod while it is down, and starts it again: every container is adopted,
// none restarted, and the deleted pod's containers are cleaned up.
func TestReadoptionAfterSIGKILL(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{AutoPodman: true})
	ns := framework.Namespace(t)
	before := runningPods(t, rl.NodeName, ns, 11)
	gone := framework.WaitForPod(t, ns, "p10", 10*time.Second, func(*v1.Pod) bool { return true })
	delete(before, "p10")

	rl.Kill()
	zero := int64(0)
	framework.DeletePod(t, ns, "p10", &zero)
	leftover := plantPodLeftover(t, rl)
	rl.Start()

	framework.Eventually(t, 60*time.Second, "the pod deleted while runlet was down is cleaned up", func() (bool, error) {
		return len(framework.Sandboxes(t, gone.UID)) == 0, nil
	})
	framework.Eventually(t, 60*time.Second, "the directory and cgroup a crash left of a pod that is gone are removed", func() (bool, error) {
		return len(existing(leftover)) == 0, nil
	})
	time.Sleep(5 * time.Second) // let a few relists and syncs pass
	assertUnchanged(t, ns, before)
	if left := existing(podCgroupDirs(t, string(gone.UID), "")); len(left) > 0 {
		t.Errorf("the pod deleted while runlet was down left its cgroup: %v", left)
	}
}

// plantPodLeftover leaves what a runlet that crashed between removing a
// pod's sandbox and its cgroup leaves: the pod's directory, and its pod
// cgroup with the runtime's empty one below, in every hierarchy. It
// returns their paths.
func plantPodLeftover(t *testing.T, rl *framework.Runlet) []string {
	t.Helper()
	uid := string(uuid.NewUUID())
	dirs := append([]string{poddir.New(rl.RootDir).Pod(uid)}, podCgroupDirs(t, uid, "libpod-leftover")...)
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = cgroups.Destroy(cgroups.Root, cgroups.PodCgroupPath(uid)) })
	return dirs
}

// podCgroupDirs are the pod's cgroup, or the named one below it, in every
// hierarchy of this host.
func podCgroupDirs(t *testing.T, uid, below string) []string {
	t.Helper()
	hs, err := cgroups.Hierarchies(cgroups.Root)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hs {
		out = append(out, filepath.Join(h, cgroups.PodCgroupPath(uid), below))
	}
	return out
}

// existing are the paths that exist.
func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// TestPodmanServiceRestart kills runlet's podman service: runlet restarts
// it, reconnects, and neither restarts nor fails any pod.
func TestPodmanServiceRestart(t *testing.T) {
	rl := framework.StartRunlet(t, framework.RunletOptions{AutoPodman: true})
	ns := framework.Namespace(t)
	before := runningPods(t, rl.NodeName, ns, 3)
	pid := podmanServicePID(t, rl)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill podman service %d: %v", pid, err)
	}
	framework.Eventually(t, 60*time.Second, "a new podman service", func() (bool, error) {
		p, err := findPodmanServicePID(rl)
		return err == nil && p != pid, nil
	})
	time.Sleep(5 * time.Second)
	assertUnchanged(t, ns, before)
	// The node keeps working: a new pod still starts.
	framework.CreatePod(t, framework.PodFor(rl.NodeName, ns, "after", framework.Busybox("main", "sleep", "3600")))
	framework.WaitForPodPhase(t, ns, "after", v1.PodRunning, 90*time.Second)
}

var serviceSocket = regexp.MustCompile(`at (/\S+/podman\.sock)`)

func podmanServicePID(t *testing.T, rl *framework.Runlet) int {
	pid, err := findPodmanServicePID(rl)
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// findPodmanServicePID finds the podman service runlet started, by the
// socket it logged.
func findPodmanServicePID(rl *framework.Runlet) (int, error) {
	log, err := os.ReadFile(rl.LogPath)
	if err != nil {
		return 0, err
	}
	m := serviceSocket.FindAllSubmatch(log, -1)
	if len(m) == 0 {
		return 0, fmt.Errorf("runlet did not log its podman socket")
	}
	sock := string(m[len(m)-1][1])
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if strings.Contains(string(cmd), "system\x00service") && strings.Contains(string(cmd), sock) {
			return pid, nil
		}
	}
	return 0, fmt.Errorf("no podman service serving %s", sock)
}

// TestRestartAsAService runs runlet as a service manager runs a service, in a cgroup of its own, and
// restarts it as systemd does with its default KillMode=control-group: SIGTERM to every process in that
// cgroup, SIGKILL to what is left. What keeps the pods (their monitors, pause processes) is not runlet's:
// no container is restarted, and one that ends after the restart has its exit code and last log line
// recorded, as when its monitor outlives runlet.
func TestRestartAsAService(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{ServiceCgroup: true, AutoPodman: true})
	ns := framework.Namespace(t)
	before := runningPods(t, rl.NodeName, ns, 2)
	waiter := framework.Busybox("main", "sh", "-c", "while [ ! -e /tmp/go ]; do sleep 0.2; done; echo finished; exit 3")
	p := framework.PodFor(rl.NodeName, ns, "waiter", waiter)
	p.Spec.RestartPolicy = v1.RestartPolicyNever
	framework.CreatePod(t, p)
	framework.WaitForPodPhase(t, ns, "waiter", v1.PodRunning, 120*time.Second)

	if !rl.StopService() {
		t.Errorf("runlet's service cgroup did not end on SIGTERM within %v", 30*time.Second)
	}
	rl.Start()
	time.Sleep(5 * time.Second) // let a few relists and syncs pass
	assertUnchanged(t, ns, before)

	kubectlExec(t, ns, "waiter", "main", "touch", "/tmp/go")
	done := framework.WaitForPodPhase(t, ns, "waiter", v1.PodFailed, 60*time.Second)
	if st := done.Status.ContainerStatuses[0].State.Terminated; st == nil || st.ExitCode != 3 || st.Reason != "Error" {
		t.Errorf("the container that ended after the restart: %+v; want terminated with exit code 3 (Error)", done.Status.ContainerStatuses[0].State)
	}
	if out := framework.Kubectl(t, "-n", ns, "logs", "waiter"); !strings.Contains(out, "finished") {
		t.Errorf("its log %q lacks the line it wrote after the restart", out)
	}
}
