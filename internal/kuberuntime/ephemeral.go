package kuberuntime

import (
	"context"

	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
)

// syncEphemeralContainers starts the ephemeral containers (added through the
// pod's ephemeralcontainers subresource) that have no container yet, in the
// pod's sandbox, as the kubelet's computePodActions/SyncPod do: they may start
// before initialization completes, and once started they are never restarted,
// whatever their exit and the pod's restartPolicy. One difference: a
// recreated sandbox starts with no containers at all here (podman removes a
// pod's containers with it), so an ephemeral container runs again in the new
// sandbox, where the kubelet, which still lists the old exited one, does not.
func (m *Manager) syncEphemeralContainers(ctx context.Context, pod *v1.Pod, sb *runtime.Sandbox, ps *runtime.PodStatus) (Result, error) {
	var res Result
	var errs []error
	for i := range pod.Spec.EphemeralContainers {
		c := EphemeralAsContainer(&pod.Spec.EphemeralContainers[i])
		if cur, _ := ps.Latest(c.Name); cur != nil {
			continue
		}
		r, err := m.startContainer(ctx, pod, c, sb, 0)
		res = merge(res, r)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return res, utilerrors.NewAggregate(errs)
}

// EphemeralAsContainer is the ephemeral container's common part as a
// container: the fields an ephemeral container may not set (ports, probes,
// resources, lifecycle) are empty by validation.
func EphemeralAsContainer(ec *v1.EphemeralContainer) *v1.Container {
	return (*v1.Container)(&ec.EphemeralContainerCommon)
}
