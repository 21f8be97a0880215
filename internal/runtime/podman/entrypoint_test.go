package podman

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runtimetest"
)

// TestEntrypointSemantics checks Kubernetes' command/args rules against an
// image that has both ENTRYPOINT and CMD (made here with podman commit).
func TestEntrypointSemantics(t *testing.T) {
	b := realBackend(t)
	image := epImage(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sb, err := b.CreateSandbox(ctx, testSandbox("ep-"+time.Now().Format("150405.000000"), "entrypoint"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.RemoveSandbox(context.Background(), sb.ID) })
	cases := []struct {
		name          string
		command, args []string
		want          string
	}{
		{"image", nil, nil, "ep default-cmd\n"},
		{"args", nil, []string{"arg1"}, "ep arg1\n"},
		{"command", []string{"echo", "cmd"}, nil, "cmd\n"},
		{"both", []string{"echo", "cmd"}, []string{"x"}, "cmd x\n"},
	}
	for _, tc := range cases {
		cfg := testContainer(sb, tc.name, tc.command...)
		cfg.Image, cfg.Args = image, tc.args
		id, err := b.CreateContainer(ctx, sb.ID, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := b.StartContainer(ctx, id); err != nil {
			t.Fatal(err)
		}
		if _, err := b.client.WaitContainer(ctx, id, "exited"); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := b.Logs(ctx, id, runtime.LogOptions{TailLines: -1}, &out, &out); err != nil || out.String() != tc.want {
			t.Errorf("%s: output %q, %v; want %q", tc.name, out.String(), err, tc.want)
		}
	}
}

func epImage(t *testing.T) string {
	image := fmt.Sprintf("localhost/runlet/eptest-%d:latest", time.Now().UnixNano())
	name := fmt.Sprintf("runlet-eptest-%d", time.Now().UnixNano())
	if out, err := exec.Command("podman", "create", "--name", name, runtimetest.Image, "true").CombinedOutput(); err != nil {
		t.Fatalf("podman create: %v\n%s", err, out)
	}
	defer exec.Command("podman", "rm", "-f", name).Run()
	out, err := exec.Command("podman", "commit", "-q", "--change", `ENTRYPOINT ["echo","ep"]`, "--change", `CMD ["default-cmd"]`, name, image).CombinedOutput()
	if err != nil {
		t.Fatalf("podman commit: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("podman", "rmi", "-f", image).Run() })
	return image
}
