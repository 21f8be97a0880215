package runtimetest

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

// syncBuffer is a bytes.Buffer safe for a writer and a poller.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *suite) testLogs(t *testing.T) {
	sb := s.sandbox(t, "logs")
	id := s.container(t, sb, "talker", "sh", "-c", "echo err1 >&2; sleep 0.2; echo out1; echo out2; echo out3")
	s.waitState(t, id, runtime.ContainerExited, 10*time.Second)
	ctx := ctxT(t, 30*time.Second)

	var out, errb bytes.Buffer
	if err := s.rt.Logs(ctx, id, runtime.LogOptions{TailLines: -1}, &out, &errb); err != nil {
		t.Fatalf("Logs: %v", err)
	}
	if out.String() != "out1\nout2\nout3\n" || errb.String() != "err1\n" {
		t.Errorf("Logs stdout %q, stderr %q; want %q and %q", out.String(), errb.String(), "out1\nout2\nout3\n", "err1\n")
	}

	out.Reset()
	if err := s.rt.Logs(ctx, id, runtime.LogOptions{TailLines: 1}, &out, io.Discard); err != nil {
		t.Fatalf("Logs(tail 1): %v", err)
	}
	if out.String() != "out3\n" {
		t.Errorf("Logs(tail 1) = %q; want %q", out.String(), "out3\n")
	}

	// The limit counts both streams together.
	var both bytes.Buffer
	if err := s.rt.Logs(ctx, id, runtime.LogOptions{TailLines: -1, LimitBytes: 7}, &both, &both); err != nil {
		t.Fatalf("Logs(limit 7): %v", err)
	}
	if both.String() != "err1\nou" {
		t.Errorf("Logs(limit 7) = %q; want %q", both.String(), "err1\nou")
	}

	out.Reset()
	if err := s.rt.Logs(ctx, id, runtime.LogOptions{TailLines: 1, Timestamps: true}, &out, io.Discard); err != nil {
		t.Fatalf("Logs(timestamps): %v", err)
	}
	ts, rest, _ := strings.Cut(out.String(), " ")
	if _, err := time.Parse(time.RFC3339Nano, ts); err != nil || rest != "out3\n" {
		t.Errorf("Logs(timestamps) = %q; want an RFC 3339 time, a space and %q", out.String(), "out3\n")
	}

	s.testLogsFollow(t, sb)
}

func (s *suite) testLogsFollow(t *testing.T, sb runtime.Sandbox) {
	id := s.container(t, sb, "ticker", "sh", "-c", "i=0; while [ $i -lt 3 ]; do echo tick$i; i=$((i+1)); sleep 0.3; done")
	var out syncBuffer
	ctx := ctxT(t, 20*time.Second)
	if err := s.rt.Logs(ctx, id, runtime.LogOptions{Follow: true, TailLines: -1}, &out, io.Discard); err != nil {
		t.Fatalf("Logs(follow): %v", err)
	}
	if out.String() != "tick0\ntick1\ntick2\n" {
		t.Errorf("Logs(follow) = %q; want all three ticks, then the end of the stream when the container exits", out.String())
	}
}

func (s *suite) testExec(t *testing.T) {
	sb := s.sandbox(t, "exec")
	id := s.container(t, sb, "target", "sleep", "3600")
	s.waitState(t, id, runtime.ContainerRunning, 10*time.Second)
	ctx := ctxT(t, time.Minute)

	var out, errb bytes.Buffer
	started := 0 // a probe's timeout counts from this call
	code, err := s.rt.Exec(ctx, id, []string{"sh", "-c", "echo hello; echo oops >&2; exit 7"},
		runtime.StreamIO{Stdout: &out, Stderr: &errb, Started: func() { started++ }})
	if err != nil || code != 7 {
		t.Fatalf("Exec(exit 7) = %d, %v; want 7", code, err)
	}
	if started != 1 {
		t.Errorf("Exec called StreamIO.Started %d times; want once, when the command runs", started)
	}
	if out.String() != "hello\n" || errb.String() != "oops\n" {
		t.Errorf("Exec stdout %q, stderr %q; want %q, %q", out.String(), errb.String(), "hello\n", "oops\n")
	}

	out.Reset()
	code, err = s.rt.Exec(ctx, id, []string{"sh", "-c", "cat; echo done"}, runtime.StreamIO{Stdin: strings.NewReader("abc\n"), Stdout: &out})
	if err != nil || code != 0 || out.String() != "abc\ndone\n" {
		t.Errorf("Exec(cat) = %d, %v, %q; want 0 and %q (stdin EOF must reach the process)", code, err, out.String(), "abc\ndone\n")
	}

	out.Reset()
	sizes := make(chan runtime.TermSize, 1)
	sizes <- runtime.TermSize{Width: 123, Height: 45}
	code, err = s.rt.Exec(ctx, id, []string{"sh", "-c", "sleep 0.3; stty size"}, runtime.StreamIO{Stdout: &out, TTY: true, Resize: sizes})
	if err != nil || code != 0 || !strings.Contains(out.String(), "45 123") {
		t.Errorf("Exec(tty, stty size) = %d, %v, %q; want 0 and \"45 123\"", code, err, out.String())
	}

	if _, err := s.rt.Exec(ctx, id, []string{"/no/such/binary"}, runtime.StreamIO{Stdout: io.Discard}); err == nil {
		t.Logf("exec of a missing binary reports through the exit code")
	}
}

func (s *suite) testAttach(t *testing.T) {
	sb := s.sandbox(t, "attach")
	id := s.create(t, sb, runtime.ContainerConfig{Name: "cat", Command: []string{"sh", "-c", "while read l; do echo got:$l; done; echo bye"}, Stdin: true})
	if err := s.rt.StartContainer(ctxT(t, time.Minute), id); err != nil {
		t.Fatalf("StartContainer: %v", err)
	}
	pr, pw := io.Pipe()
	var out syncBuffer
	errc := make(chan error, 1)
	ctx := ctxT(t, 30*time.Second)
	go func() { errc <- s.rt.Attach(ctx, id, runtime.StreamIO{Stdin: pr, Stdout: &out, Stderr: io.Discard}) }()
	_, _ = pw.Write([]byte("one\n"))
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(out.String(), "got:one") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	_ = pw.Close() // stdin EOF ends the loop, then the container
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("Attach: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Attach did not return after the container's stdin closed")
	}
	if got := out.String(); !strings.Contains(got, "got:one\n") || !strings.Contains(got, "bye\n") {
		t.Errorf("attached output = %q; want got:one and bye", got)
	}
}

func (s *suite) testStats(t *testing.T) {
	sb := s.sandbox(t, "stats")
	id := s.container(t, sb, "busy", "sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; sleep 3600")
	s.waitState(t, id, runtime.ContainerRunning, 10*time.Second)
	time.Sleep(300 * time.Millisecond)
	st, err := s.rt.Stats(ctxT(t, 30*time.Second), []string{id})
	if err != nil || len(st) != 1 {
		t.Fatalf("Stats = %+v, %v; want one sample", st, err)
	}
	c := st[0]
	if c.ID != id || c.CPUNanos == 0 || c.MemoryUsageBytes == 0 || c.MemoryLimitBytes == 0 || c.ProcessCount == 0 || c.Time.IsZero() {
		t.Errorf("Stats = %+v; want CPU, memory, limit, processes", c)
	}
}

func (s *suite) testPortForward(t *testing.T) {
	sb := s.sandbox(t, "portfwd")
	// Bound to the pod's loopback only: reachable through the pod's netns.
	id := s.container(t, sb, "web", "sh", "-c", "mkdir -p /tmp/www && echo hello-pod > /tmp/www/index.html && exec httpd -f -p 127.0.0.1:8080 -h /tmp/www")
	s.waitState(t, id, runtime.ContainerRunning, 10*time.Second)
	ctx := ctxT(t, 30*time.Second)
	var body string
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		body = s.forwardGET(t, ctx, sb.ID)
		if strings.Contains(body, "hello-pod") {
			return
		}
		time.Sleep(100 * time.Millisecond) // httpd may not listen yet
	}
	t.Errorf("GET through PortForward = %q; want the pod's page", body)
}

func (s *suite) forwardGET(t *testing.T, ctx context.Context, sandboxID string) string {
	client, server := net.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := s.rt.PortForward(ctx, sandboxID, 8080, server)
		if err != nil {
			client.Close() // nobody reads the request: the next try may
		}
		errc <- err
	}()
	_ = client.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = client.Write([]byte("GET / HTTP/1.0\r\nHost: pod\r\n\r\n"))
	b, _ := io.ReadAll(client)
	client.Close()
	if err := <-errc; err != nil {
		t.Logf("PortForward: %v", err)
	}
	return string(b)
}
