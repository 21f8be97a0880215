package podman

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/cgroups"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
	"github.com/runlet/runlet/internal/runtime/runtimetest"
)

func TestNameHolder(t *testing.T) {
	id := strings.Repeat("4cf42465", 8)
	err := errors.New(`podman POST /containers/create: creating container storage: the container name "ns_p_uid_main_0" is already in use by ` +
		id + `. You have to remove that container to be able to reuse that name: that name is already in use (HTTP 500)`)
	if got := nameHolder(err); got != id {
		t.Errorf("nameHolder = %q; want %q", got, id)
	}
	if got := nameHolder(errors.New("EOF")); got != "" {
		t.Errorf("nameHolder of another error = %q", got)
	}
}

func TestPodNameHeld(t *testing.T) {
	err := errors.New(`podman POST /pods/create: failed to make pod: adding pod to state: name "ns_p_uid" is in use: pod already exists (HTTP 409)`)
	if !podNameHeld(err) || podNameHeld(errors.New("EOF")) || podNameHeld(nil) {
		t.Error("podNameHeld misreads podman's answers")
	}
}

// TestCreateSandboxFreesHeldInfraName: a create cut short can leave only the
// infra container, holding its name; the pod's next create must go through.
func TestCreateSandboxFreesHeldInfraName(t *testing.T) {
	b := realBackend(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := runtime.SandboxConfig{PodUID: fmt.Sprintf("0b5e55ed-1ef7-4000-8000-%012d", time.Now().UnixNano()%1e12),
		Namespace: "runlet-test", Name: "held-infra", Labels: map[string]string{}}
	spec := podSpec(cfg)
	t.Cleanup(func() { _ = b.client.RemovePod(context.Background(), spec.Name) })
	// podman leaves the cgroup of the pod whose create failed (cgroup v1).
	t.Cleanup(func() {
		pc := b.podCgroup(cgroups.PodCgroupPath(cfg.PodUID))
		left, _ := os.ReadDir(filepath.Join(cgroups.Root, "cpu", pc.Path))
		var names []string
		for _, e := range left {
			if e.IsDir() {
				names = append(names, e.Name())
			}
		}
		pc.Remove(names...)
	})
	leftover, err := b.client.CreateContainer(ctx, libpod.ContainerSpec{Name: spec.InfraName, Image: runtimetest.Image, Command: []string{"true"}})
	if err != nil {
		t.Fatalf("creating the leftover holding %s: %v", spec.InfraName, err)
	}
	t.Cleanup(func() { _ = b.client.RemoveContainer(context.Background(), leftover) })
	sb, err := b.CreateSandbox(ctx, cfg)
	if err != nil {
		t.Fatalf("CreateSandbox with its infra name held: %v", err)
	}
	if err := b.RemoveSandbox(ctx, sb.ID); err != nil {
		t.Errorf("RemoveSandbox: %v", err)
	}
}

// TestBindMountOptions: read-only, propagation and the SELinux relabel the
// core asks for become podman's mount options; image volumes are not binds.
func TestBindMountOptions(t *testing.T) {
	got := bindMounts([]runtime.Mount{
		{HostPath: "/v/a", ContainerPath: "/a", Relabel: true},
		{HostPath: "/v/b", ContainerPath: "/b", ReadOnly: true, Propagation: "HostToContainer"},
		{Image: "busybox", ContainerPath: "/img"},
	})
	want := []libpod.Mount{
		{Destination: "/a", Type: "bind", Source: "/v/a", Options: []string{"rbind", "rw", "rprivate", "Z"}},
		{Destination: "/b", Type: "bind", Source: "/v/b", Options: []string{"rbind", "ro", "rslave"}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("mounts\n got %+v\nwant %+v", got, want)
	}
}
