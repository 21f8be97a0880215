package scale

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The node sets and the label that steers each set's pods to its nodes.
const (
	setRunlet   = "runlet"
	setKubemark = "kubemark"
	setLabel    = "scale-set"
)

// nodeProc is one hollow node: one process, as kubemark runs one pod per
// hollow node, so that its memory is its own.
type nodeProc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	log  string
}

// nodeSet is one set's hollow nodes.
type nodeSet struct {
	kind  string
	nodes []*nodeProc
	// tmpBefore is what kubemark's nodes find in /tmp before they start:
	// each makes a root dir and a fake CRI socket there, wherever its
	// TMPDIR points, and removes neither.
	tmpBefore map[string]bool
}

func nodeName(kind string, i int) string { return fmt.Sprintf("hollow-%s-%03d", kind, i) }

// startSet starts n hollow nodes of a kind, a few at a time, so that 100
// processes starting at once do not starve the control plane.
func (h *harness) startSet(kind string) *nodeSet {
	t := h.t
	s := &nodeSet{kind: kind}
	if kind == setKubemark {
		s.tmpBefore = kubemarkTmp()
	}
	dir := filepath.Join(h.dir, kind)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range h.cfg.nodes {
		name := nodeName(kind, i)
		kubeconfig, err := h.ca.nodeKubeconfig(dir, name)
		if err != nil {
			t.Fatalf("%s's kubeconfig: %v", name, err)
		}
		cmd := h.nodeCommand(kind, name, dir, kubeconfig, framework.FreePort(t))
		p, err := startProc(name, cmd, filepath.Join(dir, name+".log"))
		if err != nil {
			s.stop()
			t.Fatalf("starting %s: %v", name, err)
		}
		s.nodes = append(s.nodes, p)
		if i%10 == 9 {
			time.Sleep(time.Second)
		}
	}
	return s
}

// nodeCommand is a hollow node's command line. Both kinds register with
// the set's label; runlet's also with its own label and taint.
func (h *harness) nodeCommand(kind, name, dir, kubeconfig string, port int) *exec.Cmd {
	label := setLabel + "=" + kind
	if kind == setRunlet {
		root := filepath.Join(dir, name)
		return exec.Command(h.hollow, "--nodename", name, "--kubeconfig", kubeconfig, "--root-dir", root,
			"--kubelet-port", strconv.Itoa(port), "--tls-cert-file", h.c.ServingCert, "--tls-private-key-file", h.c.ServingKey,
			"--client-ca-file", h.c.CACert, "--node-labels", label)
	}
	// The kubelet API on its own port; no read-only port; the fake image
	// service, as no containerd runs here; the kubelet's client limits
	// (kube-api-qps 50, burst 100) rather than kubemark's older 10 / 20.
	return exec.Command(h.kubemark, "--morph=kubelet", "--name", name, "--kubeconfig", kubeconfig,
		"--kubelet-port", strconv.Itoa(port), "--kubelet-read-only-port=0", "--use-host-image-service=false",
		"--kube-api-qps=50", "--kube-api-burst=100", "--node-labels", label, "--v=0")
}

func startProc(name string, cmd *exec.Cmd, logPath string) (*nodeProc, error) {
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = f, f
	// Gone with the test binary, whatever ends it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	p := &nodeProc{name: name, cmd: cmd, done: make(chan struct{}), log: logPath}
	go func() {
		_ = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// waitReady waits until every node of the set is Ready in the API.
func (h *harness) waitReady(s *nodeSet, timeout time.Duration) {
	sel := setLabel + "=" + s.kind
	framework.Eventually(h.t, timeout, fmt.Sprintf("%d %s nodes Ready", len(s.nodes), s.kind), func() (bool, error) {
		for _, p := range s.nodes {
			select {
			case <-p.done:
				return false, fmt.Errorf("%s exited; its log: %s\n%s", p.name, p.log, tailFile(p.log, 20))
			default:
			}
		}
		list, err := h.c.Client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return false, err
		}
		ready := 0
		for i := range list.Items {
			if framework.NodeReady(&list.Items[i]) {
				ready++
			}
		}
		if ready < len(s.nodes) {
			return false, fmt.Errorf("%d of %d Ready", ready, len(s.nodes))
		}
		return true, nil
	})
}

// stop ends every node of the set by its PID (SIGTERM, then SIGKILL after
// 20 s), deletes their Node objects and what kubemark's left in /tmp.
func (s *nodeSet) stop() {
	var wg sync.WaitGroup
	for _, p := range s.nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(20 * time.Second):
				_ = p.cmd.Process.Kill()
				<-p.done
			}
		}()
	}
	wg.Wait()
	if s.tmpBefore != nil {
		for path := range kubemarkTmp() {
			if !s.tmpBefore[path] {
				_ = os.RemoveAll(path)
			}
		}
	}
}

// kubemarkTmp is what kubemark's nodes leave in /tmp: their root dirs and
// the sockets of their fake CRI.
func kubemarkTmp() map[string]bool {
	out := map[string]bool{}
	for _, pattern := range []string{"/tmp/hollow-kubelet.*", "/tmp/kubelet_remote_*.sock"} {
		paths, _ := filepath.Glob(pattern)
		for _, p := range paths {
			out[p] = true
		}
	}
	return out
}

func tailFile(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := 0
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			if lines++; lines > n {
				return string(b[i+1:])
			}
		}
	}
	return string(b)
}
