package ocispec

import (
	"encoding/json"
	"testing"

	"github.com/opencontainers/runtime-spec/specs-go"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/cgroups"
)

// base is a valid input: a pod with its namespaces held, a container that
// names its command, a host like this one (cgroup v1 with swap accounting,
// no CAP_SYS_RESOURCE).
func base() Input {
	return Input{
		ID: "ctr1",
		Pod: Pod{
			Config: runtime.SandboxConfig{PodUID: "u1", Namespace: "ns", Name: "pod", Hostname: "pod", NetNS: "/run/netns/cni-1"},
			IPC:    "/proc/10/ns/ipc", UTS: "/proc/10/ns/uts", PID: "/proc/10/ns/pid",
			CgroupParent: "/runlet/podu1",
		},
		Container: runtime.ContainerConfig{Name: "app", Command: []string{"/bin/app"}},
		Rootfs:    "/nonexistent-rootfs",
		Host:      Host{Cgroups: cgroups.Host{SwapLimit: true}, NoFileHard: 524288, NProcHard: 96362, Hostname: "node1"},
	}
}

func build(t *testing.T, in Input) *specs.Spec {
	t.Helper()
	s, err := Build(in)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return s
}

func ptr[T any](v T) *T { return &v }

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
