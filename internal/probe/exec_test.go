package probe

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runtimefake"
)

// fakeContainer returns a fake backend with one running container whose
// commands are played by fn.
func fakeContainer(t *testing.T, fn runtimefake.ExecFunc) (*runtimefake.Fake, string) {
	t.Helper()
	f := runtimefake.New()
	ctx := context.Background()
	sb, err := f.CreateSandbox(ctx, runtime.SandboxConfig{PodUID: "uid", Name: "p", Namespace: "ns"})
	if err != nil {
		t.Fatal(err)
	}
	id, err := f.CreateContainer(ctx, sb.ID, runtime.ContainerConfig{Name: "c", Image: "img"})
	if err != nil {
		t.Fatal(err)
	}
	f.HandleExec(fn)
	return f, id
}

func TestExecProbe(t *testing.T) {
	f, id := fakeContainer(t, func(ctx context.Context, _ string, cmd []string, sio runtime.StreamIO) (int, error) {
		switch cmd[0] {
		case "ok":
			_, _ = io.WriteString(sio.Stdout, "fine")
			return 0, nil
		case "fail":
			_, _ = io.WriteString(sio.Stderr, "broken")
			return 1, nil
		case "hang":
			<-ctx.Done()
			return -1, ctx.Err()
		case "big":
			_, _ = io.WriteString(sio.Stdout, strings.Repeat("y", 3*maxExecOutput))
			return 0, nil
		}
		return -1, errors.New("exec create failed")
	})
	ctx := context.Background()
	cases := []struct {
		cmd    string
		want   Result
		output string
		err    bool
	}{
		{"ok", Success, "fine", false},
		{"fail", Failure, "broken", false},
		{"hang", Failure, `command timed out: "hang" timed out after 50ms`, false},
		{"other", Unknown, "", true},
	}
	for _, c := range cases {
		res, out, err := Exec(ctx, f, id, []string{c.cmd}, 50*time.Millisecond)
		if res != c.want || out != c.output || (err != nil) != c.err {
			t.Errorf("%s: %s %q %v; want %s %q", c.cmd, res, out, err, c.want, c.output)
		}
	}
	if res, out, _ := Exec(ctx, f, id, []string{"big"}, time.Second); res != Success || len(out) != maxExecOutput {
		t.Errorf("big output: %s, %d bytes kept", res, len(out))
	}
	if _, err := RunInContainer(ctx, f, id, []string{"fail"}, 0); err == nil || err.Error() != "command 'fail' exited with 1" {
		t.Errorf("non-zero exit: %v", err)
	}
	if _, _, err := Exec(ctx, f, "gone", []string{"ok"}, time.Second); !errors.Is(err, runtime.ErrNotFound) {
		t.Errorf("unknown container: %v", err)
	}
}

// slowSetup is a runtime whose exec session takes longer to set up than the
// command's timeout; the command itself then runs as run says.
type slowSetup struct {
	setup <-chan struct{} // closed when the session is set up
	run   func(ctx context.Context) (int, error)
}

func (s slowSetup) Exec(ctx context.Context, _ string, _ []string, sio runtime.StreamIO) (int, error) {
	select {
	case <-s.setup:
	case <-ctx.Done():
		return -1, ctx.Err()
	}
	sio.Started()
	return s.run(ctx)
}

// The timeout is the command's, as on the kubelet's runtimes: a runtime slow
// to set up the exec session does not fail a quick command, and a command
// that hangs once started still times out.
func TestExecTimeoutCountsFromStart(t *testing.T) {
	ctx := context.Background()
	setup := make(chan struct{})
	time.AfterFunc(300*time.Millisecond, func() { close(setup) }) // set-up: six times the timeout
	quick := slowSetup{setup: setup, run: func(context.Context) (int, error) { return 0, nil }}
	if res, out, err := Exec(ctx, quick, "id", []string{"true"}, 50*time.Millisecond); res != Success || err != nil {
		t.Errorf("quick command after a slow set-up: %s %q %v; want success", res, out, err)
	}
	hang := slowSetup{setup: setup, run: func(ctx context.Context) (int, error) { <-ctx.Done(); return -1, ctx.Err() }}
	res, out, err := Exec(ctx, hang, "id", []string{"hang"}, 50*time.Millisecond)
	if res != Failure || out != `command timed out: "hang" timed out after 50ms` || err != nil {
		t.Errorf("hanging command: %s %q %v; want a timeout failure", res, out, err)
	}
}
