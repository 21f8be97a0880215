package podman

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

func TestWatchExitsWithoutDirectory(t *testing.T) {
	b := &Backend{opts: Options{ExitDir: filepath.Join(t.TempDir(), "absent"), Logf: t.Logf}}
	if _, ok := b.watchExits(context.Background(), make(chan runtime.Event)); ok {
		t.Error("watching a missing directory claimed success")
	}
}

// TestExitHintFromRealPodman: on a host podman shares with runlet, a
// container's exit is hinted by its exit file (besides podman's own event).
func TestExitHintFromRealPodman(t *testing.T) {
	b := realBackend(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sb, err := b.CreateSandbox(ctx, testSandbox("exit-hint-"+strconv.FormatInt(time.Now().UnixNano(), 36), "exits"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.RemoveSandbox(context.Background(), sb.ID) })
	ch, err := b.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id, err := b.CreateContainer(ctx, sb.ID, testContainer(sb, "c", "sh", "-c", "sleep 1; exit 3"))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case e := <-ch:
			if e.ContainerID != id {
				continue
			}
			if e.Action == "exited" {
				if e.Exit == nil || e.Exit.ExitCode != 3 || e.Exit.OOMKilled {
					t.Errorf("exit hint carries %+v; want exit code 3", e.Exit)
				}
				return
			}
		case <-ctx.Done():
			t.Fatalf("no exit-file hint for the container (exit dir %s)", b.exitsDir(context.Background()))
		}
	}
}

func TestReadExit(t *testing.T) {
	dir := t.TempDir()
	bundle := t.TempDir()
	b := &Backend{details: map[string]ctrDetail{"known": {staticDir: bundle}}}
	write := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	before := time.Now().Add(-time.Second)
	if x := b.readExit(write("unknown", "3"), "unknown"); x == nil || x.ExitCode != 3 || x.OOMKilled || x.FinishedAt.Before(before) {
		t.Errorf("exit 3 of a container without a known bundle = %+v; want code 3, finished just now", x)
	}
	if x := b.readExit(write("unknown137", "137"), "unknown137"); x != nil {
		t.Errorf("exit 137 without a bundle = %+v; want nil (an OOM kill cannot be ruled out)", x)
	}
	if x := b.readExit(write("known", "137"), "known"); x == nil || x.ExitCode != 137 || x.OOMKilled {
		t.Errorf("SIGKILL exit = %+v; want 137, not OOM-killed", x)
	}
	if err := os.WriteFile(filepath.Join(bundle, "oom"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if x := b.readExit(write("known", "137"), "known"); x == nil || !x.OOMKilled {
		t.Errorf("exit with an oom file = %+v; want OOM-killed", x)
	}
	if x := b.readExit(filepath.Join(dir, "gone"), "gone"); x != nil {
		t.Errorf("a removed exit file = %+v; want nil", x)
	}
}
