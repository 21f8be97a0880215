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
