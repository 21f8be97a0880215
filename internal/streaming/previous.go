package streaming

import (
	"strings"

	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
)

// lastTerminated is the container `kubectl logs --previous` means: the
// kubelet takes it from the status's lastState.terminated, which, while a
// crashing container waits for its restart, is the newest container, not
// the one before it. Nil when the status names none that still exists.
func lastTerminated(pod *v1.Pod, ps *runtime.PodStatus, name string) *runtime.Container {
	if ps == nil {
		return nil
	}
	var id string
	for _, cs := range append(append([]v1.ContainerStatus{}, pod.Status.InitContainerStatuses...), pod.Status.ContainerStatuses...) {
		if cs.Name == name && cs.LastTerminationState.Terminated != nil {
			id = cs.LastTerminationState.Terminated.ContainerID
		}
	}
	if i := strings.Index(id, "://"); i >= 0 {
		id = id[i+3:]
	}
	for i := range ps.Containers {
		if id != "" && ps.Containers[i].ID == id {
			return &ps.Containers[i]
		}
	}
	return nil
}
