package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/utils/exec"
)

func testExecNotRunning(t *testing.T, node, ns string) {
	pod := framework.PodFor(node, ns, "halfdone", framework.Busybox("done", "true"), framework.Busybox("up", "sleep", "3600"))
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	runPod(t, pod)
	framework.WaitForPod(t, ns, "halfdone", 60*time.Second, func(p *v1.Pod) bool {
		for _, cs := range p.Status.ContainerStatuses {
			if cs.Name == "done" {
				return cs.State.Terminated != nil
			}
		}
		return false
	})
	_, errOut, code := kubectl(t, time.Minute, nil, "exec", "-n", ns, "halfdone", "-c", "done", "--", "true")
	if code == 0 || !strings.Contains(errOut, `container "done" in pod "halfdone" is not running`) {
		t.Errorf("exec into an exited container: exit %d, %q; want a clear error", code, errOut)
	}
}

func testAttach(t *testing.T, node, ns string) {
	c := framework.Busybox("c", "sh", "-c", "while read l; do echo got:$l; done; echo bye")
	c.Stdin, c.StdinOnce = true, true
	pod := framework.PodFor(node, ns, "reader", c)
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	runPod(t, pod)
	out, errOut, code := kubectl(t, time.Minute, strings.NewReader("one\ntwo\n"), "attach", "-i", "-n", ns, "reader", "-c", "c")
	if code != 0 || !strings.Contains(out, "got:one\ngot:two\nbye\n") {
		t.Errorf("attach: exit %d, stdout %q, stderr %q; want both lines echoed and bye after stdin EOF", code, out, errOut)
	}
	framework.WaitForPodPhase(t, ns, "reader", v1.PodSucceeded, 60*time.Second)
}

func testCopy(t *testing.T, node, ns string) {
	runPod(t, framework.PodFor(node, ns, "box", framework.Busybox("c", "sleep", "3600")))
	src := t.TempDir()
	big := bytes.Repeat([]byte(fmt.Sprintf("%x\n", time.Now().UnixNano())), 40000) // ~0.7 MB
	writeFile(t, src+"/big.txt", big)
	writeFile(t, src+"/sub/small.txt", []byte("small\n"))
	mustKubectl(t, "cp", src, ns+"/box:/tmp/up", "-c", "c")
	if got := mustKubectl(t, "exec", "-n", ns, "box", "--", "cat", "/tmp/up/sub/small.txt"); got != "small\n" {
		t.Errorf("copied in: %q", got)
	}
	dst := t.TempDir() + "/down"
	mustKubectl(t, "cp", ns+"/box:/tmp/up", dst, "-c", "c")
	for name, want := range map[string][]byte{"big.txt": big, "sub/small.txt": []byte("small\n")} {
		if got, err := os.ReadFile(dst + "/" + name); err != nil || !bytes.Equal(got, want) {
			t.Errorf("copied out %s: %d bytes, %v; want %d bytes as sent", name, len(got), err, len(want))
		}
	}
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(path[:strings.LastIndex(path, "/")], 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// testExecTTYAndExitCode: exit codes through kubectl (WebSockets to the
// apiserver), and a TTY with a resize through client-go's SPDY executor.
func testExecTTYAndExitCode(t *testing.T, node, ns string) {
	runPod(t, framework.PodFor(node, ns, "shell", framework.Busybox("c", "sleep", "3600")))
	out, errOut, code := kubectl(t, time.Minute, nil, "exec", "-n", ns, "shell", "--", "sh", "-c", "echo out; echo err >&2; exit 7")
	if code != 7 || out != "out\n" || !strings.Contains(errOut, "err") {
		t.Errorf("exec exit 7: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	out, _, code = kubectl(t, time.Minute, strings.NewReader("abc\n"), "exec", "-i", "-n", ns, "shell", "--", "sh", "-c", "cat; echo eof")
	if code != 0 || out != "abc\neof\n" {
		t.Errorf("exec -i with stdin EOF: exit %d, %q", code, out)
	}

	var tty bytes.Buffer
	err := execTTY(t, ns, "shell", []string{"sh", "-c", "sleep 1; stty size; tty; exit 3"}, &tty)
	var ee utilexec.ExitError
	if !errors.As(err, &ee) || ee.ExitStatus() != 3 {
		t.Errorf("exec with a TTY: %v; want exit code 3", err)
	}
	if s := tty.String(); !strings.Contains(s, "43 132") || !strings.Contains(s, "/dev/pts/") {
		t.Errorf("TTY output %q; want the resized size (43 132) and a pts device", s)
	}
}

// fixedSize sends one terminal size, then waits for the session to end.
type fixedSize struct {
	sent bool
	done <-chan struct{}
}

func (f *fixedSize) Next() *remotecommand.TerminalSize {
	if !f.sent {
		f.sent = true
		return &remotecommand.TerminalSize{Width: 132, Height: 43}
	}
	<-f.done
	return nil
}

func execTTY(t *testing.T, ns, pod string, cmd []string, out *bytes.Buffer) error {
	c := framework.Get(t)
	req := c.Client.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("exec").
		VersionedParams(&v1.PodExecOptions{Container: "c", Command: cmd, Stdout: true, TTY: true}, scheme.ParameterCodec)
	ex, err := remotecommand.NewSPDYExecutor(c.Config, "POST", req.URL())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: out, Tty: true, TerminalSizeQueue: &fixedSize{done: ctx.Done()}})
}
