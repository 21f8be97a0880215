package podman

import (
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/cgroups"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
	"github.com/runlet/runlet/internal/runtime/podman/podmanservice"
)

// CreateSpecs are the libpod create specs the backend would send for a
// sandbox and one of its containers, on a cgroup v1 host with swap
// accounting and without CAP_SYS_RESOURCE (as these machines are), without
// talking to a service: the far end of the pod spec → backend spec
// translation, for tests and fuzzing across the contract.
func CreateSpecs(sb runtime.SandboxConfig, ctr runtime.ContainerConfig) (libpod.PodSpec, libpod.ContainerSpec) {
	b := &Backend{cg: cgroups.Host{SwapLimit: true}, ociRuntime: "runc", rlimits: specRLimits(podmanservice.Limits{NoFile: 1 << 20, NProc: 1 << 20})}
	pod := podSpec(sb)
	b.applyPodSecurity(&pod, sb)
	return pod, b.containerSpec("pod", sandboxLabels(sb), ctr)
}
