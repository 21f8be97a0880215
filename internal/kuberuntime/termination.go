package kuberuntime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	v1 "k8s.io/api/core/v1"
	"k8s.io/utils/buffer"
)

// Termination message limits, as the kubelet's (pkg/kubelet/container).
const (
	// maxTerminationMessage is how much of a container's termination message
	// file is read: its last 4 KiB.
	maxTerminationMessage = 4 * 1024
	// maxTerminationLogBytes and maxTerminationLogLines bound the log tail
	// that FallbackToLogsOnError reports.
	maxTerminationLogBytes = 2 * 1024
	maxTerminationLogLines = 80
	// terminationLogTimeout bounds reading that tail from the backend.
	terminationLogTimeout = 5 * time.Second
)

// labelTerminationMessageFile names the host file bind-mounted at the
// container's terminationMessagePath, so its message can be read once the
// container has exited, also by a restarted runlet.
const labelTerminationMessageFile = "io.runlet.container.termination-message-file"

// addTerminationMessageFile creates the container's termination message file
// on the host and bind-mounts it at terminationMessagePath, as the kubelet's
// makeMounts: <root-dir>/pods/<uid>/containers/<name>/<random id>, one per
// container instance, mode 0666 so that any user of the container can write
// it. Without one the container still runs; its message is then empty.
func (m *Manager) addTerminationMessageFile(pod *v1.Pod, c *v1.Container, cfg *runtime.ContainerConfig) {
	if c.TerminationMessagePath == "" || m.dirs.Root == "" {
		return
	}
	path, err := createTerminationMessageFile(m.dirs.Container(string(pod.UID), c.Name))
	if err != nil {
		m.log.WithError(err).WithField("container", c.Name).Warn("termination message file not created; the container runs without it")
		return
	}
	cfg.Mounts = append(cfg.Mounts, runtime.Mount{HostPath: path, ContainerPath: c.TerminationMessagePath, Relabel: true})
	cfg.Labels[labelTerminationMessageFile] = path
}

func createTerminationMessageFile(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	id := make([]byte, 4)
	_, _ = rand.Read(id)
	path := filepath.Join(dir, hex.EncodeToString(id))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o666)
	if err != nil {
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", err
	}
	// The umask narrowed the mode at creation; a non-root user must write it.
	return path, os.Chmod(path, 0o666)
}

// TerminationMessages returns the termination message of each exited
// container of the pod (the current and the previous instance of each), by
// container ID. A message is read once, after the container exited, and
// kept until the pod is forgotten.
func (m *Manager) TerminationMessages(pod *v1.Pod, ps *runtime.PodStatus) map[string]string {
	out := map[string]string{}
	for _, specs := range [][]v1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range specs {
			cur, prev := ps.Latest(specs[i].Name)
			for _, c := range []*runtime.Container{cur, prev} {
				if c != nil && c.State == runtime.ContainerExited {
					if msg := m.terminationMessage(pod, &specs[i], c); msg != "" {
						out[c.ID] = msg
					}
				}
			}
		}
	}
	return out
}

func (m *Manager) terminationMessage(pod *v1.Pod, spec *v1.Container, c *runtime.Container) string {
	uid := string(pod.UID)
	m.mu.Lock()
	msg, ok := m.messages[uid][c.ID]
	m.mu.Unlock()
	if ok {
		return msg
	}
	msg = m.readTerminationMessage(spec, c)
	m.mu.Lock()
	if m.messages[uid] == nil {
		m.messages[uid] = map[string]string{}
	}
	m.messages[uid][c.ID] = msg
	m.mu.Unlock()
	return msg
}

// readTerminationMessage is the kubelet's getTerminationMessage: the file's
// last 4 KiB; with FallbackToLogsOnError, a failed container whose file is
// empty or missing reports the tail of its log instead.
func (m *Manager) readTerminationMessage(spec *v1.Container, c *runtime.Container) string {
	fallback := spec.TerminationMessagePolicy == v1.TerminationMessageFallbackToLogsOnError && c.ExitCode != 0
	if path := c.Labels[labelTerminationMessageFile]; path != "" {
		data, err := readAtMost(path, maxTerminationMessage)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return fmt.Sprintf("Error on reading termination log %s: %v", path, err)
		case len(data) > 0 || !fallback:
			return string(data)
		}
	}
	if !fallback {
		return ""
	}
	return m.logTail(c.ID)
}

// logTail is the kubelet's readLastStringFromContainerLogs: at most the last
// 80 lines and 2 KiB of the container's log.
func (m *Manager) logTail(id string) string {
	ctx, cancel := context.WithTimeout(context.Background(), terminationLogTimeout)
	defer cancel()
	buf, _ := buffer.NewTypedRingFixed[byte](maxTerminationLogBytes)
	opts := runtime.LogOptions{TailLines: maxTerminationLogLines}
	if err := m.rt.Logs(ctx, id, opts, buf, buf); err != nil {
		return fmt.Sprintf("Error on reading termination message from logs: %v", err)
	}
	return string(buf.Slice())
}

// readAtMost returns the last max bytes of the file at path (the kubelet's
// pkg/util/tail.ReadAtMost).
func readAtMost(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if size == 0 {
		return nil, nil
	}
	if size < max {
		max = size
	}
	if _, err := f.Seek(-max, io.SeekEnd); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

// removeTerminationMessageFile removes the file of a container being removed.
func removeTerminationMessageFile(c *runtime.Container) {
	if path := c.Labels[labelTerminationMessageFile]; path != "" {
		_ = os.Remove(path)
	}
}

// removePodFiles removes the pod's per-container files, and the pod's
// directory once nothing else is left in it.
func (m *Manager) removePodFiles(uid string) error {
	if m.dirs.Root == "" || uid == "" {
		return nil
	}
	if err := os.RemoveAll(filepath.Dir(m.dirs.Container(uid, "x"))); err != nil {
		return err
	}
	if err := os.Remove(m.dirs.Pod(uid)); err != nil && !errors.Is(err, os.ErrNotExist) && !isNotEmpty(err) {
		return err
	}
	return nil
}

func isNotEmpty(err error) bool {
	return errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST)
}
