package kuberuntime

import (
	"context"

	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
)

// syncInitContainers runs the init containers one at a time, in order, as
// the kubelet does: each must exit 0 before the next starts, and before any
// regular container. done reports that all of them have succeeded.
func (m *Manager) syncInitContainers(ctx context.Context, pod *v1.Pod, sb *runtime.Sandbox, ps *runtime.PodStatus) (done bool, res Result, err error) {
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		cur, _ := ps.Latest(c.Name)
		if cur != nil && cur.State == runtime.ContainerExited && cur.ExitCode == 0 {
			m.setWaiting(string(pod.UID), c.Name, nil)
			continue
		}
		if cur != nil && cur.State == runtime.ContainerRunning {
			return false, Result{}, nil
		}
		// Not started yet, or failed and to be retried (a failed init
		// container under restartPolicy Never ends the pod before this).
		res, err = m.syncContainer(ctx, initPolicyPod(pod), c, sb, ps)
		return false, res, err
	}
	return true, Result{}, nil
}

// initPolicyPod is the pod as its init containers see it: they are retried
// on failure unless the pod never restarts anything.
func initPolicyPod(pod *v1.Pod) *v1.Pod {
	if pod.Spec.RestartPolicy != v1.RestartPolicyAlways {
		return pod
	}
	p := *pod
	p.Spec.RestartPolicy = v1.RestartPolicyOnFailure
	return &p
}

// initFailed reports an init container that failed under restartPolicy
// Never: the pod fails without running its regular containers.
func initFailed(pod *v1.Pod, ps *runtime.PodStatus) bool {
	if pod.Spec.RestartPolicy != v1.RestartPolicyNever {
		return false
	}
	for i := range pod.Spec.InitContainers {
		cur, _ := ps.Latest(pod.Spec.InitContainers[i].Name)
		if cur != nil && cur.State == runtime.ContainerExited && cur.ExitCode != 0 {
			return true
		}
	}
	return false
}

func isInit(pod *v1.Pod, name string) bool {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}
