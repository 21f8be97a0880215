package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/runlet/runlet/test/e2e/framework"
)

// benchFloor reads the memory of vkfloor, a virtual-kubelet node whose
// provider does nothing, settled as long as runlet was at 0 pods: what the
// framework and libraries runlet must use cost before runlet adds anything.
func benchFloor(n *node, r *results) {
	c := framework.Get(n.t)
	bin := filepath.Join(n.t.TempDir(), "vkfloor")
	build := exec.Command("go", "build", "-o", bin, "./test/bench/vkfloor")
	build.Dir = c.RepoRoot
	if out, err := build.CombinedOutput(); err != nil {
		n.t.Fatalf("go build ./test/bench/vkfloor: %v\n%s", err, out)
	}
	name := "vkfloor-" + runID()
	metrics := fmt.Sprintf("127.0.0.1:%d", framework.FreePort(n.t))
	cmd := exec.Command(bin, "--kubeconfig", c.AdminKubeconfig, "--nodename", name,
		"--listen", fmt.Sprintf("127.0.0.1:%d", framework.FreePort(n.t)), "--metrics-addr", metrics)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		n.t.Fatal(err)
	}
	defer stopFloor(n, cmd, name)
	progress("vkfloor %s (pid %d): waiting for its node lease, then settling %v", name, cmd.Process.Pid, n.cfg.settle)
	leases := c.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	err := wait.PollUntilContextTimeout(n.ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := leases.Get(ctx, name, metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		n.t.Fatalf("vkfloor %s: no node lease: %v", name, err)
	}
	n.sleepSettle()
	r.floor = readMem(n.t, cmd.Process.Pid, "http://"+metrics)
}

// stopFloor stops vkfloor by its PID and removes its Node object.
func stopFloor(n *node, cmd *exec.Cmd, name string) {
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	framework.SignalAndWait(cmd.Process, syscall.SIGTERM, done, 30*time.Second)
	_ = framework.Get(n.t).Client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
}
