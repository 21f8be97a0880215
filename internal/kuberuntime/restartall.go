package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/runlet/runlet/internal/podutil"
	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
)

// restartAll kills (without grace) and removes every init and regular
// container of the pod, as the kubelet's RestartAllContainers reset: the
// others first, regular before init, then the ones whose exit asked for
// it. The sandbox stays, and with it the pod's network and volumes; the
// next sync runs the containers again from the first init container.
func (m *Manager) restartAll(ctx context.Context, pod *v1.Pod, ps *runtime.PodStatus) (Result, error) {
	var targets, sources [2][]runtime.Container // [0] regular, [1] init
	for kind, specs := range [][]v1.Container{pod.Spec.Containers, pod.Spec.InitContainers} {
		for i := range specs {
			for _, c := range ps.Containers {
				if c.Name != specs[i].Name {
					continue
				}
				if c.State == runtime.ContainerExited && podutil.RestartsAllContainers(&specs[i], int32(c.ExitCode)) {
					sources[kind] = append(sources[kind], c)
				} else {
					targets[kind] = append(targets[kind], c)
				}
			}
		}
	}
	podIP := m.podIP(pod, ps.Sandbox())
	for _, list := range [][]runtime.Container{targets[0], targets[1], sources[0], sources[1]} {
		for i := range list {
			c := &list[i]
			if c.State == runtime.ContainerRunning {
				msg := fmt.Sprintf("Container %s will be restarted with all the pod's containers", c.Name)
				if err := m.killContainer(ctx, pod, c, 0, podIP, msg, nil); err != nil {
					return Result{Changed: true}, fmt.Errorf("restarting all containers: %w", err)
				}
			}
			if err := m.rt.RemoveContainer(ctx, c.ID); err != nil && !errors.Is(err, runtime.ErrNotFound) {
				return Result{Changed: true}, fmt.Errorf("restarting all containers: removing %s: %w", c.Name, err)
			}
			removeTerminationMessageFile(c)
			m.setWaiting(string(pod.UID), c.Name, nil)
		}
	}
	// The next sync, on the backend's view without them, starts them.
	return Result{Changed: true, RequeueAfter: time.Millisecond}, nil
}
