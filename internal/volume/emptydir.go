package volume

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// emptyDirPerm is the mode of an emptyDir's directory, as on the kubelet.
const emptyDirPerm os.FileMode = 0777

// setUpEmptyDir makes an emptyDir at dir, as the kubelet's emptyDir plugin:
// a 0777 directory, or a tmpfs mounted on it for medium Memory (sized by
// sizeLimit, capped by what the pod may use), then the pod's fsGroup. The
// configMap, secret, projected and downwardAPI plugins wrap it too.
func (m *Manager) setUpEmptyDir(pod *v1.Pod, name string, src v1.EmptyDirVolumeSource, dir string, args mountArgs) error {
	// A set-up emptyDir is left as it is: the pod may have changed its
	// mode, and a restart of runlet must not undo that.
	readyDir := m.cfg.Dirs.VolumePlugin(string(pod.UID), emptyDirPlugin, name)
	if isReady(readyDir) {
		switch src.Medium {
		case v1.StorageMediumMemory:
			if tmpfs, err := isTmpfs(m.mounter, dir); err == nil && tmpfs {
				return nil
			}
		case v1.StorageMediumDefault:
			if _, err := os.Stat(dir); err == nil {
				return nil
			}
		}
		_ = os.RemoveAll(readyDir)
	}
	var err error
	switch src.Medium {
	case v1.StorageMediumDefault:
		err = setupDir(dir)
	case v1.StorageMediumMemory:
		err = m.setupTmpfs(dir, m.tmpfsSize(pod, src.SizeLimit))
	default:
		err = fmt.Errorf("runlet does not support emptyDir medium %q", src.Medium)
	}
	// The kubelet ignores a failed ownership change here too.
	_ = changePermissions(dir, args.fsGroup, nil, false)
	if err == nil {
		setReady(readyDir)
	}
	return err
}

// setupDir creates dir with mode 0777 whatever runlet's umask.
func setupDir(dir string) error {
	if err := os.MkdirAll(dir, emptyDirPerm); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm() != emptyDirPerm {
		return os.Chmod(dir, emptyDirPerm)
	}
	return nil
}

// setupTmpfs mounts a tmpfs of size bytes (0: the kernel's default) on dir,
// unless one is there already.
func (m *Manager) setupTmpfs(dir string, size int64) error {
	if err := setupDir(dir); err != nil {
		return err
	}
	if tmpfs, err := isTmpfs(m.mounter, dir); err != nil {
		return err
	} else if tmpfs {
		return nil
	}
	var opts []string
	if size > 0 {
		opts = append(opts, fmt.Sprintf("size=%d", size))
	}
	return m.mounter.MountSensitiveWithoutSystemd("tmpfs", dir, "tmpfs", opts, nil)
}

// tmpfsSize is the kubelet's calculateEmptyDirMemorySize: node allocatable
// memory, or the pod's memory limit when smaller, or sizeLimit when smaller
// still.
func (m *Manager) tmpfsSize(pod *v1.Pod, sizeLimit *resource.Quantity) int64 {
	var size int64
	if q, ok := m.nodeAllocatable()[v1.ResourceMemory]; ok {
		size = q.Value()
	}
	if limit := podMemoryLimit(pod); limit > 0 && (size == 0 || limit < size) {
		size = limit
	}
	if sizeLimit != nil && sizeLimit.Value() > 0 && (size == 0 || sizeLimit.Value() < size) {
		size = sizeLimit.Value()
	}
	return size
}

// podMemoryLimit is the memory limit of the pod's cgroup as the kubelet sets
// it: the sum over the containers, or the largest init container's when that
// is more; 0 when a container has no limit.
func podMemoryLimit(pod *v1.Pod) int64 {
	var sum int64
	for _, c := range pod.Spec.Containers {
		q, ok := c.Resources.Limits[v1.ResourceMemory]
		if !ok {
			return 0
		}
		sum += q.Value()
	}
	for _, c := range pod.Spec.InitContainers {
		q, ok := c.Resources.Limits[v1.ResourceMemory]
		if !ok {
			return 0
		}
		sum = max(sum, q.Value())
	}
	return sum
}

const readyFile = "ready"

// isReady and setReady are the kubelet's marker that a plugin finished
// setting a volume up.
func isReady(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, readyFile))
	return err == nil && fi.Mode().IsRegular()
}

func setReady(dir string) {
	if err := os.MkdirAll(dir, 0750); err != nil && !errors.Is(err, os.ErrExist) {
		return
	}
	if f, err := os.Create(filepath.Join(dir, readyFile)); err == nil {
		f.Close()
	}
}
