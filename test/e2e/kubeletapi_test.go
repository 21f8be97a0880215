package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestKubeletAPI drives the kubelet API of one runlet node through the real
// apiserver, as users do: kubectl logs/exec/attach/cp/port-forward and the
// node proxy for stats.
func TestKubeletAPI(t *testing.T) {
	t.Parallel()
	rl := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	node := rl.NodeName
	t.Run("StatsAndMetrics", func(t *testing.T) { t.Parallel(); testStatsAndMetrics(t, rl, ns) })
	for name, fn := range map[string]func(*testing.T, string, string){
		"Logs":               testLogs,
		"LogsFollow":         testLogsFollow,
		"LogsPrevious":       testLogsPrevious,
		"LogsInitContainer":  testLogsInitContainer,
		"ExecTTYAndExitCode": testExecTTYAndExitCode,
		"ExecNotRunning":     testExecNotRunning,
		"Attach":             testAttach,
		"Copy":               testCopy,
		"PortForward":        testPortForward,
	} {
		t.Run(name, func(t *testing.T) { t.Parallel(); fn(t, node, ns) })
	}
}

// kubectl runs kubectl as cluster-admin and returns stdout, stderr and the
// exit code; it fails the test only when kubectl cannot run or times out.
func kubectl(t *testing.T, timeout time.Duration, stdin io.Reader, args ...string) (string, string, int) {
	t.Helper()
	out, errOut, code, err := runKubectl(framework.Get(t), timeout, stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out, errOut, code
}

// runKubectl is kubectl for goroutines other than the test's: it reports
// instead of failing the test.
func runKubectl(c *framework.Cluster, timeout time.Duration, stdin io.Reader, args ...string) (string, string, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Kubectl, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.AdminKubeconfig)
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		return out.String(), errb.String(), -1, fmt.Errorf("kubectl %s: no answer in %v; stdout %q stderr %q",
			strings.Join(args, " "), timeout, out.String(), errb.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return "", "", -1, fmt.Errorf("kubectl %s: %w", strings.Join(args, " "), err)
	}
	return out.String(), errb.String(), cmd.ProcessState.ExitCode(), nil
}

// mustKubectl is kubectl that fails the test on a non-zero exit.
func mustKubectl(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := kubectl(t, time.Minute, nil, args...)
	if code != 0 {
		t.Fatalf("kubectl %s exited %d: %s", strings.Join(args, " "), code, errOut)
	}
	return out
}

func runPod(t *testing.T, pod *v1.Pod) {
	t.Helper()
	framework.CreatePod(t, pod)
	framework.WaitForPodPhase(t, pod.Namespace, pod.Name, v1.PodRunning, 90*time.Second)
}

// The kubelet's --timestamps format: RFC 3339 with nine fractional digits.
var tsLine = regexp.MustCompile(`^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z) (.*)$`)

func testLogs(t *testing.T, node, ns string) {
	runPod(t, framework.PodFor(node, ns, "talker", framework.Busybox("c", "sh", "-c",
		"for i in 1 2 3 4 5; do echo line$i; done; echo oops >&2; sleep 2.5; echo late; exec sleep 3600")))
	const all = "line1\nline2\nline3\nline4\nline5\noops\nlate\n"
	framework.Eventually(t, 30*time.Second, "the late line", func() (bool, error) {
		out, err := framework.KubectlE("logs", "-n", ns, "talker")
		return out == all, err
	})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tail=2"}, "oops\nlate\n"},
		{[]string{"--limit-bytes=8"}, "line1\nli"},
		{[]string{"--since=1h"}, all},
		{[]string{"--since-time=" + time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, ""},
	} {
		if got := mustKubectl(t, append([]string{"logs", "-n", ns, "talker"}, tc.args...)...); got != tc.want {
			t.Errorf("logs %v = %q; want %q", tc.args, got, tc.want)
		}
	}
	late := checkTimestamps(t, mustKubectl(t, "logs", "-n", ns, "talker", "--timestamps"), all)
	// The API carries since-time in whole seconds; "late" came 2.5 s after the rest.
	since := late.Truncate(time.Second).Format(time.RFC3339)
	if got := mustKubectl(t, "logs", "-n", ns, "talker", "--since-time="+since); got != "late\n" {
		t.Errorf("logs --since-time=%s = %q; want only the late line", since, got)
	}
}

// checkTimestamps checks each line's prefix, that the times have sub-second
// precision (podman 4.3's API cuts them to seconds) and do not go back, and
// returns the time of the last line.
func checkTimestamps(t *testing.T, out, want string) time.Time {
	t.Helper()
	var content strings.Builder
	var last time.Time
	subSecond := false
	for _, line := range strings.SplitAfter(strings.TrimSuffix(out, "\n"), "\n") {
		m := tsLine.FindStringSubmatch(strings.TrimSuffix(line, "\n"))
		if m == nil {
			t.Fatalf("line %q lacks an RFC 3339 nanosecond timestamp", line)
		}
		ts, _ := time.Parse(time.RFC3339Nano, m[1])
		if ts.Before(last) {
			t.Errorf("timestamps go back: %v after %v", ts, last)
		}
		last, subSecond = ts, subSecond || ts.Nanosecond() != 0
		content.WriteString(m[2] + "\n")
	}
	if content.String() != want {
		t.Errorf("timestamped content %q; want %q", content.String(), want)
	}
	if !subSecond {
		t.Errorf("every timestamp is a whole second: %q", out)
	}
	return last
}

// testLogsFollow follows a container until it exits, through the API and
// through the on-disk log (--timestamps): both streams must end by themselves.
func testLogsFollow(t *testing.T, node, ns string) {
	pod := framework.PodFor(node, ns, "ticker", framework.Busybox("c", "sh", "-c", "for i in 1 2 3; do echo tick$i; sleep 1; done"))
	pod.Spec.RestartPolicy = v1.RestartPolicyNever
	runPod(t, pod)
	type result struct {
		out  string
		code int
		err  error
	}
	c := framework.Get(t)
	follow := func(args ...string) <-chan result {
		ch := make(chan result, 1)
		go func() {
			o, _, code, err := runKubectl(c, time.Minute, nil, append([]string{"logs", "-f", "-n", ns, "ticker"}, args...)...)
			ch <- result{o, code, err}
		}()
		return ch
	}
	plain, stamped := follow(), follow("--timestamps")
	if r := <-plain; r.err != nil || r.code != 0 || r.out != "tick1\ntick2\ntick3\n" {
		t.Errorf("logs -f = %q (exit %d, %v); want all ticks and the end of the stream", r.out, r.code, r.err)
	}
	if r := <-stamped; r.err != nil || r.code != 0 {
		t.Errorf("logs -f --timestamps: exit %d, %v", r.code, r.err)
	} else {
		checkTimestamps(t, r.out, "tick1\ntick2\ntick3\n")
	}
}

// testLogsPrevious restarts a container (SIGTERM to its shell) and reads the
// logs of both instances; each prints its own random ID.
func testLogsPrevious(t *testing.T, node, ns string) {
	runPod(t, framework.PodFor(node, ns, "restarter", framework.Busybox("c", "sh", "-c",
		`trap "exit 3" TERM; echo run-$(cat /proc/sys/kernel/random/uuid); while true; do sleep 1; done`)))
	if _, errOut, code := kubectl(t, time.Minute, nil, "logs", "--previous", "-n", ns, "restarter"); code == 0 || !strings.Contains(errOut, "previous terminated container") {
		t.Errorf("logs --previous before any restart: exit %d, %q; want a not-found error", code, errOut)
	}
	first := mustKubectl(t, "logs", "-n", ns, "restarter")
	mustKubectl(t, "exec", "-n", ns, "restarter", "--", "kill", "-TERM", "1")
	framework.WaitForPod(t, ns, "restarter", 90*time.Second, func(p *v1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].RestartCount >= 1 && cs[0].State.Running != nil
	})
	var cur string
	framework.Eventually(t, 30*time.Second, "the new instance's log line", func() (bool, error) {
		out, err := framework.KubectlE("logs", "-n", ns, "restarter")
		cur = out
		return strings.HasPrefix(out, "run-"), err
	})
	if prev := mustKubectl(t, "logs", "--previous", "-n", ns, "restarter"); prev != first || cur == first {
		t.Errorf("logs --previous = %q, current %q; want the first instance's %q and a new one", prev, cur, first)
	}
}

func testLogsInitContainer(t *testing.T, node, ns string) {
	pod := framework.PodFor(node, ns, "withinit", framework.Busybox("main", "sh", "-c", "echo main-up; exec sleep 3600"))
	pod.Spec.InitContainers = []v1.Container{framework.Busybox("init", "sh", "-c", "echo init-done")}
	framework.CreatePod(t, pod)
	framework.Eventually(t, 90*time.Second, "the init container to finish", func() (bool, error) {
		p, err := framework.Get(t).Client.CoreV1().Pods(ns).Get(context.Background(), "withinit", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		cs := p.Status.InitContainerStatuses
		return len(cs) == 1 && cs[0].State.Terminated != nil, nil
	})
	if got := mustKubectl(t, "logs", "-n", ns, "withinit", "-c", "init"); got != "init-done\n" {
		t.Errorf("init container log %q", got)
	}
	framework.Eventually(t, 30*time.Second, "logs of all containers", func() (bool, error) {
		out, err := framework.KubectlE("logs", "-n", ns, "withinit", "--all-containers")
		return strings.Contains(out, "init-done\n") && strings.Contains(out, "main-up\n"), err
	})
}
