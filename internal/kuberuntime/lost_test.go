package kuberuntime

import (
	"strings"
	"testing"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
)

// removeSandbox removes the pod's sandbox with its containers behind the
// manager's back, as `podman pod rm -f` does.
func (e *env) removeSandbox() {
	e.t.Helper()
	for _, sb := range e.f.Sandboxes() {
		if err := e.f.RemoveSandbox(e.ctx, sb.ID); err != nil {
			e.t.Fatal(err)
		}
	}
}

// TestLostSandboxKeepsRestartCounts: a pod whose podman pod vanished gets a
// new sandbox, with a SandboxChanged event, and its containers go on
// counting restarts from their last status.
func TestLostSandboxKeepsRestartCounts(t *testing.T) {
	e := newEnv(t)
	rec := record.NewFakeRecorder(100)
	e.m.rec = rec
	pod := newPod(v1.RestartPolicyAlways, "c")
	e.mustSync(pod)
	e.removeSandbox()
	// What the status said before: running, restarted 3 times; the status
	// manager carried it over as a lost running container.
	pod.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c", RestartCount: 4,
		State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}},
		LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
			Reason: status.ReasonContainerStatusUnknown, ExitCode: 137}}}}
	e.mustSync(pod)
	if len(e.f.Sandboxes()) != 1 {
		t.Fatalf("sandboxes %+v; want a new one", e.f.Sandboxes())
	}
	if cur := e.latest(pod, "c"); cur.State != runtime.ContainerRunning || cur.Attempt != 4 {
		t.Errorf("container %+v; want running as attempt 4", cur)
	}
	if evs := events(rec); !strings.Contains(evs, "Normal SandboxChanged Pod sandbox changed, it will be killed and re-created.") {
		t.Errorf("events %q; want SandboxChanged", evs)
	}
}

// TestLostSandboxNeverRerunsFinished: under restartPolicy Never a pod whose
// sandbox vanished is done once its containers' last statuses say they all
// ended: no sandbox is created and nothing runs again, as on the kubelet.
func TestLostSandboxNeverRerunsFinished(t *testing.T) {
	e := newEnv(t)
	pod := newPod(v1.RestartPolicyNever, "done", "run")
	e.mustSync(pod)
	e.removeSandbox()
	pod.Status.ContainerStatuses = []v1.ContainerStatus{
		{Name: "done", State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed"}}},
		{Name: "run", RestartCount: 1, State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}},
			LastTerminationState: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
				Reason: status.ReasonContainerStatusUnknown, ExitCode: 137}}},
	}
	res := e.mustSync(pod)
	if !res.Terminal || len(e.f.Sandboxes())+len(e.f.Containers()) != 0 {
		t.Errorf("sync = %+v with sandboxes %+v containers %+v; want terminal and nothing created", res, e.f.Sandboxes(), e.f.Containers())
	}

	// Under OnFailure only the container that failed runs again.
	e = newEnv(t)
	statuses := pod.Status.ContainerStatuses
	pod = newPod(v1.RestartPolicyOnFailure, "done", "run")
	pod.Status.ContainerStatuses = statuses
	e.mustSync(pod)
	e.removeSandbox()
	pod.Status.ContainerStatuses[1].LastTerminationState.Terminated.ExitCode = 137
	e.mustSync(pod)
	var names []string
	for _, c := range e.f.Containers() {
		names = append(names, c.Name)
	}
	if len(names) != 1 || names[0] != "run" {
		t.Errorf("containers %v; want only run started again", names)
	}
}
