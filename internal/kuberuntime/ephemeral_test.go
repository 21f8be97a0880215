package kuberuntime

import (
	"testing"

	v1 "k8s.io/api/core/v1"
)

func withEphemeral(pod *v1.Pod, name string) *v1.Pod {
	pod.Spec.EphemeralContainers = append(pod.Spec.EphemeralContainers, v1.EphemeralContainer{
		EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: name, Image: "img:1", Stdin: true, TTY: true},
	})
	return pod
}

// TestEphemeralContainerStartsOnceNeverRestarts: an ephemeral container added
// to a running pod starts in the pod's sandbox, with its stdin and tty, and is
// not restarted when it exits, even under restartPolicy Always.
func TestEphemeralContainerStartsOnceNeverRestarts(t *testing.T) {
	e := newEnv(t)
	pod := newPod(v1.RestartPolicyAlways, "main")
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	main := e.latest(pod, "main")
	pod = withEphemeral(pod, "debugger")
	res, err := e.sync(pod)
	if err != nil || !res.Changed {
		t.Fatalf("SyncPod = %+v, %v", res, err)
	}
	dbg := e.latest(pod, "debugger")
	if dbg.SandboxID != main.SandboxID {
		t.Errorf("ephemeral container in sandbox %s, want the pod's %s", dbg.SandboxID, main.SandboxID)
	}
	if cfg, _ := e.f.Config(dbg.ID); !cfg.Stdin || !cfg.TTY {
		t.Errorf("debugger created without stdin/tty: %+v", cfg)
	}
	if e.latest(pod, "main").ID != main.ID {
		t.Error("adding an ephemeral container restarted the pod's container")
	}

	if err := e.f.Exit(dbg.ID, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	if got := e.latest(pod, "debugger"); got.ID != dbg.ID {
		t.Errorf("exited ephemeral container was restarted (new container %s)", got.ID)
	}
	if n := e.f.Calls("CreateContainer"); n != 2 {
		t.Errorf("%d containers created, want 2", n)
	}
}

// TestEphemeralContainerBeforeInitDone: an ephemeral container starts while
// an init container still runs (it is how one debugs a stuck init).
func TestEphemeralContainerBeforeInitDone(t *testing.T) {
	e := newEnv(t)
	pod := withInit(newPod(v1.RestartPolicyAlways, "main"), "init")
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	pod = withEphemeral(pod, "debugger")
	if _, err := e.sync(pod); err != nil {
		t.Fatal(err)
	}
	e.latest(pod, "debugger")
	if c, _ := e.status(pod).Latest("main"); c != nil {
		t.Error("main started before its init container finished")
	}
}
