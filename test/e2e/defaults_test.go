package e2e

import (
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
)

// TestClientCAFromTheCluster: without --client-ca-file, the apiserver's kubelet-client certificate is
// verified against the cluster's CA from the node's kubeconfig (as kubeadm points a kubelet's
// clientCAFile at it), so kubectl logs and exec work with no CA given by hand.
func TestClientCAFromTheCluster(t *testing.T) {
	t.Parallel()
	r := framework.StartRunlet(t, framework.RunletOptions{NoClientCAFile: true})
	ns := framework.Namespace(t)
	framework.CreatePod(t, framework.PodFor(r.NodeName, ns, "p", framework.Busybox("c", "sh", "-c", "echo from-p; sleep 3600")))
	framework.WaitForPodPhase(t, ns, "p", v1.PodRunning, time.Minute)
	framework.Eventually(t, 30*time.Second, "kubectl logs", func() (bool, error) {
		out, err := framework.KubectlE("logs", "--namespace", ns, "p")
		return err == nil && strings.Contains(out, "from-p"), nil
	})
	if out, err := framework.KubectlE("exec", "--namespace", ns, "p", "--", "echo", "ok"); err != nil || out != "ok\n" {
		t.Errorf("kubectl exec: %q, %v", out, err)
	}
	if !strings.Contains(r.Log(), "the cluster's CA, from the node's kubeconfig") {
		t.Errorf("runlet did not say where its client CA came from:\n%s", r.LogTail(40))
	}
}

// TestHealthz: /healthz on the metrics address follows the backend: a stopped podman service makes it
// fail, naming the check, and a restarted one makes it pass again.
func TestHealthz(t *testing.T) {
	t.Parallel()
	svc := &framework.PodmanService{
		Socket: filepath.Join(t.TempDir(), "podman.sock"), LogPath: filepath.Join(t.TempDir(), "podman.log"),
		ContainersConf: framework.Podman(t).ContainersConf,
	}
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	r := framework.StartRunlet(t, framework.RunletOptions{PodmanSocket: svc.URL()})
	healthz := func() (int, string) {
		resp, err := http.Get(r.MetricsURL() + "/healthz?verbose")
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	framework.Eventually(t, 30*time.Second, "/healthz ok", func() (bool, error) {
		code, body := healthz()
		return code == http.StatusOK && strings.Contains(body, "[+]apiserver ok") && strings.Contains(body, "[+]backend ok"), nil
	})
	if err := svc.Stop(); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 30*time.Second, "/healthz failing on the backend", func() (bool, error) {
		code, body := healthz()
		return code == http.StatusInternalServerError && strings.Contains(body, "[-]backend failed") &&
			strings.Contains(body, "[+]apiserver ok"), nil
	})
	if err := svc.Start(); err != nil {
		t.Fatal(err)
	}
	framework.Eventually(t, 30*time.Second, "/healthz ok again", func() (bool, error) {
		code, _ := healthz()
		return code == http.StatusOK, nil
	})
}

// TestTakenPortIsFatal: a port runlet needs that is taken stops it at once with an error naming the
// flag, the metrics port as much as the kubelet API's.
func TestTakenPortIsFatal(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	addr := busy.Addr().String()
	for _, flag := range []string{"--metrics-addr", "--kubelet-port"} {
		value := addr
		if flag == "--kubelet-port" {
			_, value, _ = net.SplitHostPort(addr)
		}
		r := framework.StartRunlet(t, framework.RunletOptions{ExtraArgs: []string{flag, value}, NoWaitReady: true, AllowUncleanExit: true})
		select {
		case <-r.Exited():
		case <-time.After(30 * time.Second):
			t.Fatalf("%s %s taken: runlet still runs\n%s", flag, value, r.LogTail(20))
		}
		if code := r.ExitCode(); code != 1 || !strings.Contains(r.Log(), flag) || !strings.Contains(r.Log(), "already in use") {
			t.Errorf("%s %s taken: exit code %d, log:\n%s", flag, value, code, r.LogTail(10))
		}
	}
}
