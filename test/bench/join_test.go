package bench

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/runlet/runlet/internal/childproc"
	"github.com/runlet/runlet/internal/join"
	"github.com/runlet/runlet/internal/runtime/podman"
	"github.com/runlet/runlet/test/e2e/framework"
)

// benchJoin times a node's arrival, cfg.join times each way, alternately:
// `runlet join` as hack/join-command.sh prints it for the bench's control
// plane (discovery of cluster-info, the files, exec, TLS bootstrap), and
// runlet started with the cluster's bootstrap kubeconfig, which skips the
// discovery (the raw column). Each sample is a fresh node name and
// directory; from the exec to the Node Ready, seen by a watch.
func benchJoin(t *testing.T, ctx context.Context, cfg config, be *podman.Backend, r *results) {
	c := framework.Get(t)
	endpoint, token, pin := joinCommand(t, ctx, c)
	bin := framework.RunletBinary(t)
	progress("join: %d times `runlet join %s --token %s.<secret> --discovery-token-ca-cert-hash %s`, and as many bootstrap-kubeconfig starts",
		cfg.join, endpoint, strings.SplitN(token, ".", 2)[0], pin)
	for i := range cfg.join {
		for _, viaJoin := range []bool{true, false} {
			dir := t.TempDir()
			name := fmt.Sprintf("join-%s-%d", runID(), i)
			root, conf := filepath.Join(dir, "root"), filepath.Join(dir, "etc")
			flags := benchRunletFlags(t, c, be)
			how, argv := "runlet join", []string(nil)
			if viaJoin {
				argv = append([]string{bin, "join", endpoint, "--token", token, "--discovery-token-ca-cert-hash", pin,
					"--nodename", name, "--root-dir", root, "--config-out", conf, "--"}, flags...)
			} else {
				how = "bootstrap kubeconfig"
				argv = append([]string{bin, "--nodename", name, "--root-dir", root,
					"--bootstrap-kubeconfig", c.BootstrapKubeconfig, "--kubeconfig", filepath.Join(conf, "kubeconfig"),
					"--cert-dir", filepath.Join(root, "pki"), "--client-ca-file", c.CACert}, flags...)
			}
			registered, ready := timeNodeReady(t, ctx, name, root, filepath.Join(dir, "runlet.log"), argv)
			if viaJoin {
				r.join, r.joinRegistered = append(r.join, ready), append(r.joinRegistered, registered)
			} else {
				r.bootstrapReady = append(r.bootstrapReady, ready)
			}
			progress("join: node %s (%s) Ready %v after the exec, registered after %v", name, how,
				ready.Round(time.Millisecond), registered.Round(time.Millisecond))
		}
	}
}

// joinCommand is what hack/join-command.sh prints for the cluster: its
// apiserver, the bootstrap token cp-up.sh stores (pki/bootstrap-token), and
// the pin of pki/ca.crt. It waits until the controller-manager has signed
// cluster-info for the token, so that no sample waits for that.
func joinCommand(t *testing.T, ctx context.Context, c *framework.Cluster) (endpoint, token, pin string) {
	b, err := os.ReadFile(filepath.Join(c.PKIDir, "bootstrap-token"))
	if err != nil {
		t.Fatal(err)
	}
	token = strings.TrimSpace(string(b))
	tok, err := join.ParseToken(token)
	if err != nil {
		t.Fatalf("%s: %v", filepath.Join(c.PKIDir, "bootstrap-token"), err)
	}
	b, err = os.ReadFile(c.CACert)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("%s: no PEM block", c.CACert)
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatalf("%s: %v", c.CACert, err)
	}
	key := "jws-kubeconfig-" + tok.ID
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		cm, err := c.Client.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, "cluster-info", metav1.GetOptions{})
		return err == nil && cm.Data[key] != "", nil
	})
	if err != nil {
		t.Fatalf("kube-public/cluster-info has no %s: %v", key, err)
	}
	return c.Server, token, join.CAHash(ca)
}

// benchRunletFlags are the flags every runlet of the bench gets besides its
// identity and directories (framework.StartRunlet's): ports on 127.0.0.1,
// the kubelet endpoint's serving certificate, the bench's podman service.
func benchRunletFlags(t *testing.T, c *framework.Cluster, be *podman.Backend) []string {
	return []string{
		"--address", "127.0.0.1", "--node-ip", "127.0.0.1", "--kubelet-port", strconv.Itoa(framework.FreePort(t)),
		"--tls-cert-file", c.ServingCert, "--tls-private-key-file", c.ServingKey,
		"--podman-socket", be.Client().Socket(), "--metrics-addr", fmt.Sprintf("127.0.0.1:%d", framework.FreePort(t)),
		"--log-level", "info",
	}
}

// timeNodeReady runs argv and returns how long after its start the watch
// first saw the Node, and saw it Ready. Then it stops the process, removes
// what runlet set up on the host for the node, and deletes the Node.
func timeNodeReady(t *testing.T, ctx context.Context, name, root, logPath string, argv []string) (registered, ready time.Duration) {
	nodes := framework.Get(t).Client.CoreV1().Nodes()
	w, err := nodes.Watch(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	out, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	t0 := time.Now()
	exited, err := childproc.Start(cmd, syscall.SIGKILL)
	if err != nil {
		t.Fatal(err)
	}
	defer stopJoined(t, cmd, exited, name, root)

	timeout := time.After(2 * time.Minute)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("node %s: the watch ended", name)
			}
			n, isNode := ev.Object.(*v1.Node)
			if !isNode || ev.Type == watch.Deleted {
				continue
			}
			at := time.Since(t0)
			if registered == 0 {
				registered = at
			}
			if framework.NodeReady(n) {
				return registered, at
			}
		case <-exited:
			t.Fatalf("node %s: runlet exited (%v) before the node was Ready\n%s", name, cmd.ProcessState, logTail(logPath))
		case <-timeout:
			t.Fatalf("node %s: not Ready within 2m of the exec\n%s", name, logTail(logPath))
		}
	}
}

// stopJoined stops runlet with SIGTERM, cleans the host as the framework
// does after its runlets, and deletes the Node (its Lease goes with it).
func stopJoined(t *testing.T, cmd *exec.Cmd, exited <-chan struct{}, name, root string) {
	if !framework.SignalAndWait(cmd.Process, syscall.SIGTERM, exited, 30*time.Second) {
		t.Errorf("runlet %s (pid %d) did not exit within 30s of SIGTERM: killed", name, cmd.Process.Pid)
	}
	framework.UnmountUnder(root)
	if _, err := framework.RemoveNodeNetwork(root, name); err != nil {
		t.Logf("runlet %s: %v", name, err)
	}
	if _, err := framework.RemovePodCgroups(root, name); err != nil {
		t.Logf("runlet %s: %v", name, err)
	}
	err := framework.Get(t).Client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})
	if err != nil {
		t.Logf("delete node %s: %v", name, err)
	}
}

// logTail is the end of a runlet's log, for a failure's message.
func logTail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}
