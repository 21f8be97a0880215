package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
)

// TestRemotePodman drives a podman service through --podman-socket tcp://, as for a podman on another
// machine: pods run, exits are seen (from podman's events: no exit files), logs and exec work, and
// runlet says at start-up what a remote service costs.
func TestRemotePodman(t *testing.T) {
	t.Parallel()
	svc := &framework.PodmanService{
		TCP: fmt.Sprintf("127.0.0.1:%d", framework.FreePort(t)), LogPath: filepath.Join(t.TempDir(), "podman-tcp.log"),
		ContainersConf: framework.Podman(t).ContainersConf,
	}
	if err := svc.Start(); err != nil {
		t.Fatalf("podman on tcp: %v", err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	r := framework.StartRunlet(t, framework.RunletOptions{PodmanSocket: svc.URL()})
	if log := r.Log(); !strings.Contains(log, "remote podman: container exits are seen through podman's events") {
		t.Errorf("runlet did not warn about what a remote podman degrades; log:\n%s", r.LogTail(40))
	}
	ns := framework.Namespace(t)

	p := framework.PodFor(r.NodeName, ns, "cat", framework.Busybox("c", "sh", "-c", "echo started; sleep 3600"))
	framework.CreatePod(t, p)
	framework.WaitForPodPhase(t, ns, "cat", v1.PodRunning, time.Minute)
	framework.Eventually(t, 30*time.Second, "logs over tcp", func() (bool, error) {
		out, err := framework.KubectlE("logs", "--namespace", ns, "cat")
		return err == nil && strings.Contains(out, "started"), nil
	})
	out, err := framework.KubectlStdin("abc", "exec", "-i", "--namespace", ns, "cat", "--", "sh", "-c", "cat; echo :eof")
	if err != nil || out != "abc:eof\n" {
		t.Errorf("exec with stdin over tcp: %q, %v; want stdin's end to reach the container", out, err)
	}

	exit := framework.PodFor(r.NodeName, ns, "exit", framework.Busybox("c", "sh", "-c", "exit 3"))
	exit.Spec.RestartPolicy = v1.RestartPolicyNever
	framework.CreatePod(t, exit)
	got := framework.WaitForPodPhase(t, ns, "exit", v1.PodFailed, time.Minute)
	if st := got.Status.ContainerStatuses; len(st) != 1 || st[0].State.Terminated == nil || st[0].State.Terminated.ExitCode != 3 {
		t.Errorf("exit through a remote podman: %+v", st)
	}
}
