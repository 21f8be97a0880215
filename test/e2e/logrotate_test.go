package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
)

// TestContainerLogRotation: with --container-log-max-size and
// --container-log-max-files, a chatty container's log is rotated as the
// kubelet rotates it (older files compressed, at most max-files kept), and
// `kubectl logs -f` started before the rotations sees every line once, in
// order.
func TestContainerLogRotation(t *testing.T) {
	rl := framework.StartRunlet(t, framework.RunletOptions{
		ExtraArgs: []string{"--container-log-max-size=32Ki", "--container-log-max-files=3"}})
	ns := framework.Namespace(t)
	const lines = 2500
	script := fmt.Sprintf(`i=0; while [ $i -lt %d ]; do echo "line-$i %s"; i=$((i+1)); [ $((i %% 50)) = 0 ] && sleep 1; done; echo the-end`,
		lines, strings.Repeat("x", 100))
	pod := framework.PodFor(rl.NodeName, ns, "chatty", framework.Busybox("c", "sh", "-c", script))
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	framework.CreatePod(t, pod)
	p := framework.WaitForPodPhase(t, ns, pod.Name, v1.PodRunning, 90*time.Second)

	c := framework.Get(t)
	out, _, code, err := runKubectl(c, 3*time.Minute, nil, "logs", "-f", "-n", ns, pod.Name)
	if err != nil || code != 0 || !strings.Contains(out, "the-end") {
		t.Fatalf("logs -f: exit %d, %v; last output %q", code, err, lastLines(out, 3))
	}
	next := 0
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "line-") {
			continue
		}
		if want := fmt.Sprintf("line-%d ", next); !strings.HasPrefix(l, want) {
			t.Fatalf("logs -f: got %q where %q was due (a line lost or repeated across a rotation)", l[:min(len(l), 20)], want)
		}
		next++
	}
	if next != lines {
		t.Fatalf("logs -f showed %d lines; want %d", next, lines)
	}

	logPath := containerLogPath(t, p)
	files, _ := filepath.Glob(logPath + "*")
	gz, _ := filepath.Glob(logPath + ".*.gz")
	if len(files) > 3 || len(gz) == 0 {
		t.Errorf("log files %v; want at most 3, older ones compressed", files)
	}
	if tail := framework.Kubectl(t, "logs", "--tail=1", "-n", ns, pod.Name); strings.TrimSpace(tail) != "the-end" {
		t.Errorf("logs --tail=1 = %q", tail)
	}
}

func containerLogPath(t *testing.T, p *v1.Pod) string {
	path := framework.ContainerLogPath(t, p.Status.ContainerStatuses[0].ContainerID)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("container log %q: %v", path, err)
	}
	return path
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}
