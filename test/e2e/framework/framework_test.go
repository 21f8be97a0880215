package framework_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/runlet/runlet/test/e2e/framework"
)

func TestMain(m *testing.M) { framework.Main(m) }

// The control plane is up, the default ServiceAccount exists, runlet's bootstrap token has kubeadm's
// RBAC and no more, and
// the scheduler works (a pod for a node that does not exist is reported Unschedulable).
func TestControlPlane(t *testing.T) {
	c := framework.Get(t)
	ctx := context.Background()
	if _, err := c.Client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Fatalf("default/default ServiceAccount: %v", err)
	}
	if out := framework.Kubectl(t, "get", "--raw", "/readyz"); strings.TrimSpace(out) != "ok" {
		t.Fatalf("/readyz: %q", out)
	}
	// runlet's bootstrap credential may create node-client CSRs, and nothing a node does.
	for can, want := range map[string]string{
		"create certificatesigningrequests.certificates.k8s.io --subresource nodeclient": "yes",
		"create certificatesigningrequests.certificates.k8s.io":                          "yes",
		"list secrets": "no", "get configmaps": "no", "create nodes": "no", "watch pods": "no",
		"create events": "no", "update leases -n kube-node-lease": "no",
	} {
		args := append([]string{"--kubeconfig", c.BootstrapKubeconfig, "auth", "can-i"}, strings.Fields(can)...)
		if out, _ := framework.KubectlE(args...); strings.TrimSpace(out) != want {
			t.Errorf("the bootstrap credential: can-i %s = %q, want %q", can, strings.TrimSpace(out), want)
		}
	}
	ns := framework.Namespace(t)
	pod := framework.CreatePod(t, framework.PodFor("no-such-node", ns, "pending", framework.Busybox("c", "true")))
	framework.WaitForPod(t, ns, pod.Name, time.Minute, func(p *v1.Pod) bool {
		for _, cd := range p.Status.Conditions {
			if cd.Type == v1.PodScheduled && cd.Status == v1.ConditionFalse && cd.Reason == v1.PodReasonUnschedulable {
				return true
			}
		}
		return false
	})
	for _, f := range []string{c.CACert, c.ServingCert, c.ServingKey, c.Kubectl, c.Helm} {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
}

// The framework's podman service answers on its socket, survives a restart, and the CLI helpers work.
func TestPodmanService(t *testing.T) {
	p := framework.Podman(t)
	if err := p.Ping(); err != nil {
		t.Fatal(err)
	}
	pid := p.PID()
	if err := p.Restart(); err != nil {
		t.Fatal(err)
	}
	if p.PID() == pid || p.Ping() != nil {
		t.Fatalf("restart: pid %d -> %d, ping %v", pid, p.PID(), p.Ping())
	}
	if out := framework.PodmanCLI(t, "image", "exists", framework.BusyboxImage); out != "" {
		t.Fatalf("image exists: %q", out)
	}
	if cs := framework.PodContainers(t, "no-such-uid"); len(cs) != 0 {
		t.Fatalf("containers for a made-up uid: %v", cs)
	}
	if ps := framework.PodmanPods(t, "no-such-uid"); len(ps) != 0 {
		t.Fatalf("pods for a made-up uid: %v", ps)
	}
}

// The Runlet process plumbing, exercised with a stand-in binary (a shell script) so that it does not
// depend on runlet itself: flags, Stop with exit code, Kill, Restart, log capture.
func TestRunletProcess(t *testing.T) {
	c := framework.Get(t)
	fake := filepath.Join(t.TempDir(), "fake-runlet")
	script := "#!/bin/sh\necho \"fake runlet $*\"\ntrap 'echo got TERM; exit 0' TERM\nwhile :; do sleep 0.1; done\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	r := framework.StartRunlet(t, framework.RunletOptions{Binary: fake, NoWaitReady: true, StopTimeout: 10 * time.Second})
	framework.Eventually(t, 10*time.Second, "fake runlet output", func() (bool, error) {
		return strings.Contains(r.Log(), "fake runlet --nodename "+r.NodeName), nil
	})
	for _, want := range []string{"--bootstrap-kubeconfig " + c.BootstrapKubeconfig, "--address 127.0.0.1", "--node-ip 127.0.0.1", "--client-ca-file " + c.CACert, "--podman-socket " + framework.Podman(t).Socket} {
		if !strings.Contains(r.Log(), want) {
			t.Errorf("flags lack %q:\n%s", want, r.Log())
		}
	}
	pid := r.PID()
	if code, err := r.Stop(); err != nil || code != 0 {
		t.Fatalf("stop: code %d, %v", code, err)
	}
	if syscall.Kill(pid, 0) == nil {
		t.Fatalf("pid %d still alive after Stop", pid)
	}
	starts := func(n int) {
		t.Helper()
		framework.Eventually(t, 10*time.Second, "fake runlet started", func() (bool, error) {
			return strings.Count(r.Log(), "fake runlet --nodename") == n, nil
		})
	}
	r.Restart()
	if !r.Running() || r.PID() == pid {
		t.Fatalf("restart: running=%v pid %d -> %d", r.Running(), pid, r.PID())
	}
	starts(2)
	r.Kill()
	if r.Running() || r.ExitCode() != -1 {
		t.Fatalf("kill: running=%v exit code %d", r.Running(), r.ExitCode())
	}
	r.Start()
	if !r.Running() {
		t.Fatal("start after kill: not running")
	}
	starts(3)
	// cleanup stops it again with SIGTERM and expects exit code 0
}
