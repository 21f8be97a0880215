package podman

import (
	"context"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

// TestServiceRestart kills the private podman service: the backend starts
// it again, and the running container (owned by conmon) is still there.
func TestServiceRestart(t *testing.T) {
	b := realBackend(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sb, err := b.CreateSandbox(ctx, testSandbox("svc-restart-"+time.Now().Format("150405.000000"), "svc-restart"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.RemoveSandbox(context.Background(), sb.ID) })
	id, err := b.CreateContainer(ctx, sb.ID, testContainer(sb, "c", "sleep", "3600"))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.StartContainer(ctx, id); err != nil {
		t.Fatal(err)
	}

	old := b.ServicePID()
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for b.ServicePID() == old || b.Ping(ctx) != nil {
		if time.Since(start) > 30*time.Second {
			t.Fatal("the podman service did not come back within 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("service back after %v (pid %d -> %d)", time.Since(start), old, b.ServicePID())
	c, err := b.InspectContainer(ctx, id)
	if err != nil || c.State != runtime.ContainerRunning {
		t.Errorf("after the restart: %+v, %v; want the container still running", c, err)
	}
}

// TestForeignSocket adopts a service the backend did not start, as with an
// operator-run podman: limits come from the service's PID (SO_PEERCRED).
func TestForeignSocket(t *testing.T) {
	owner := realBackend(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := New(ctx, Options{Socket: "unix://" + owner.Client().Socket()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if b.ServicePID() != 0 {
		t.Error("the backend claims to own a service it did not start")
	}
	if !reflect.DeepEqual(b.RLimits(), owner.RLimits()) || b.OCIRuntime() != owner.OCIRuntime() {
		t.Errorf("foreign: rlimits %v runtime %s; owner: %v %s", b.RLimits(), b.OCIRuntime(), owner.RLimits(), owner.OCIRuntime())
	}
	if b.limits.Source == "runlet's own getrlimit" {
		t.Errorf("limits read from runlet itself; want the service's /proc entry")
	}
	if err := b.Close(); err != nil || owner.Ping(ctx) != nil {
		t.Errorf("closing the adopting backend must leave the service running: %v", err)
	}
}
