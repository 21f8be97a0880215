package podman

import (
	"net/http"
	"testing"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
	"github.com/runlet/runlet/internal/runtime/podman/libpod/libpodtest"
	"github.com/runlet/runlet/internal/runtime/podman/podmanservice"
)

// fakePodman is a fake libpod service to put a Backend on.
type fakePodman struct {
	*libpodtest.Server
	t *testing.T
}

func newFakePodman(t *testing.T) *fakePodman {
	t.Helper()
	return &fakePodman{Server: libpodtest.New(t), t: t}
}

func (f *fakePodman) handle(route string, h http.HandlerFunc) { f.Handle(route, h) }

func (f *fakePodman) json(route string, status int, v any) { f.JSON(route, status, v) }

func (f *fakePodman) sent(route string) []libpodtest.Request { return f.Sent(route) }

// backend returns a Backend on the fake, as New would have set it up on a
// cgroup v1 host without CAP_SYS_RESOURCE.
func (f *fakePodman) backend() *Backend {
	return &Backend{
		opts:       Options{Logf: f.t.Logf, ExitDir: f.t.TempDir()},
		client:     libpod.NewClient("unix://" + f.Socket()),
		ociRuntime: "runc",
		rlimits:    specRLimits(podmanservice.Limits{NoFile: 20000, NProc: 32768}),
		sandboxes:  map[string]sandboxMeta{},
		details:    map[string]ctrDetail{},
		host:       runtime.HostInfo{RuntimeName: "podman"},
	}
}
