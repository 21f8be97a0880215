package kuberuntime

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runlet/runlet/internal/poddir"
	v1 "k8s.io/api/core/v1"
)

// termEnv is an env whose manager keeps per-pod files under a temp root.
func termEnv(t *testing.T) (*env, poddir.Dirs) {
	e := newEnv(t)
	e.m.dirs = poddir.New(t.TempDir())
	return e, e.m.dirs
}

func termPod(policy v1.TerminationMessagePolicy) *v1.Pod {
	pod := newPod(v1.RestartPolicyNever, "c")
	pod.Spec.Containers[0].TerminationMessagePath = "/dev/termination-custom-log"
	pod.Spec.Containers[0].TerminationMessagePolicy = policy
	return pod
}

// hostFile returns the termination message file bind-mounted into the
// newest container, checking the mount as the kubelet makes it.
func (e *env) hostFile(pod *v1.Pod, dirs poddir.Dirs) string {
	e.t.Helper()
	cfg, _ := e.f.Config(e.latest(pod, "c").ID)
	var path string
	for _, m := range cfg.Mounts {
		if m.ContainerPath == "/dev/termination-custom-log" && !m.ReadOnly {
			path = m.HostPath
		}
	}
	if path == "" {
		e.t.Fatalf("mounts = %+v; want the message file, writable, at the path", cfg.Mounts)
	}
	if filepath.Dir(path) != dirs.Container(string(pod.UID), "c") {
		e.t.Errorf("host file %s is not under the pod's container directory", path)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o666 {
		e.t.Fatalf("host file: %v, mode %v; want 0666 so a non-root user writes it", err, fi.Mode())
	}
	return path
}

func (e *env) message(pod *v1.Pod) string {
	return e.m.TerminationMessages(pod, e.status(pod))[e.latest(pod, "c").ID]
}

func TestTerminationMessageFromFile(t *testing.T) {
	e, dirs := termEnv(t)
	pod := termPod(v1.TerminationMessageReadFile)
	e.mustSync(pod)
	path := e.hostFile(pod, dirs)
	if err := os.WriteFile(path, []byte("DONE"), 0o666); err != nil {
		t.Fatal(err)
	}
	if msg := e.m.TerminationMessages(pod, e.status(pod)); len(msg) != 0 {
		t.Errorf("messages of a running container: %v", msg)
	}
	if err := e.f.Exit(e.latest(pod, "c").ID, 0); err != nil {
		t.Fatal(err)
	}
	if got := e.message(pod); got != "DONE" {
		t.Errorf("message %q, want DONE", got)
	}
	// Read once: the message stays what the container left.
	_ = os.WriteFile(path, []byte("changed"), 0o666)
	if got := e.message(pod); got != "DONE" {
		t.Errorf("message %q after a rewrite, want DONE as read", got)
	}
}

func TestTerminationMessageCappedAt4KiB(t *testing.T) {
	e, dirs := termEnv(t)
	pod := termPod(v1.TerminationMessageReadFile)
	e.mustSync(pod)
	body := strings.Repeat("a", 1000) + strings.Repeat("z", 4096)
	if err := os.WriteFile(e.hostFile(pod, dirs), []byte(body), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := e.f.Exit(e.latest(pod, "c").ID, 1); err != nil {
		t.Fatal(err)
	}
	if got := e.message(pod); got != strings.Repeat("z", 4096) {
		t.Errorf("message of %d bytes; want the file's last 4096", len(got))
	}
}

func TestTerminationMessageFallbackToLogs(t *testing.T) {
	var lines []string
	for i := range 100 {
		lines = append(lines, fmt.Sprintf("line %03d %s", i, strings.Repeat("-", 30)))
	}
	logs := strings.Join(lines, "\n") + "\n"
	for _, tc := range []struct {
		name string
		code int
		file string
		want string
	}{
		{"failed, empty file: the log tail", 1, "", logs[len(logs)-2048:]},
		{"failed, file written: the file", 1, "OK", "OK"},
		{"succeeded: no fallback", 0, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, dirs := termEnv(t)
			pod := termPod(v1.TerminationMessageFallbackToLogsOnError)
			e.mustSync(pod)
			if err := os.WriteFile(e.hostFile(pod, dirs), []byte(tc.file), 0o666); err != nil {
				t.Fatal(err)
			}
			id := e.latest(pod, "c").ID
			e.f.SetLogs(id, logs)
			if err := e.f.Exit(id, tc.code); err != nil {
				t.Fatal(err)
			}
			if got := e.message(pod); got != tc.want {
				t.Errorf("message %q, want %q", got, tc.want)
			}
		})
	}
}

// TestTerminationFilesRemovedWithPod: nothing of the pod stays under the
// root directory once the pod is removed.
func TestTerminationFilesRemovedWithPod(t *testing.T) {
	e, dirs := termEnv(t)
	pod := termPod(v1.TerminationMessageReadFile)
	e.mustSync(pod)
	e.hostFile(pod, dirs)
	if err := e.m.RemovePod(e.ctx, e.status(pod)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dirs.Pod(string(pod.UID))); !os.IsNotExist(err) {
		t.Errorf("pod directory left behind: %v", err)
	}
}
