package volume

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/runlet/runlet/internal/volume/atomic"
	v1 "k8s.io/api/core/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/kubectl/pkg/util/fieldpath"
)

// setUpDownwardAPI writes the pod's fields into dir (tmpfs, as on the
// kubelet). Labels and annotations change with the pod: each sync writes
// the pod runlet was handed last.
func (m *Manager) setUpDownwardAPI(pod *v1.Pod, name string, src *v1.DownwardAPIVolumeSource, dir string, args mountArgs) error {
	payload, err := m.downwardAPIPayload(src.Items, pod, orDefaultMode(src.DefaultMode))
	if err != nil {
		return err
	}
	return m.writeVolume(pod, name, v1.StorageMediumMemory, dir, payload, args)
}

// downwardAPIPayload is the kubelet's downwardapi.CollectData.
func (m *Manager) downwardAPIPayload(items []v1.DownwardAPIVolumeFile, pod *v1.Pod, defaultMode int32) (map[string]atomic.FileProjection, error) {
	var errs []error
	data := make(map[string]atomic.FileProjection, len(items))
	for _, item := range items {
		f := atomic.FileProjection{Mode: itemMode(item.Mode, defaultMode)}
		switch {
		case item.FieldRef != nil:
			v, err := fieldpath.ExtractFieldPathAsString(pod, item.FieldRef.FieldPath)
			if err != nil {
				errs = append(errs, err)
			}
			f.Data = []byte(v)
		case item.ResourceFieldRef != nil:
			v, err := m.resourceFieldRef(pod, item.ResourceFieldRef)
			if err != nil {
				errs = append(errs, err)
			}
			f.Data = []byte(v)
		}
		data[filepath.Clean(item.Path)] = f
	}
	return data, utilerrors.NewAggregate(errs)
}

// resourceFieldRef resolves a container's resource as env does.
func (m *Manager) resourceFieldRef(pod *v1.Pod, ref *v1.ResourceFieldSelector) (string, error) {
	if m.cfg.ResourceFieldRef == nil {
		return "", errors.New("resourceFieldRef is not available on this node")
	}
	for _, c := range podContainers(pod) {
		if c.Name == ref.ContainerName {
			return m.cfg.ResourceFieldRef(pod, c, ref, m.nodeAllocatable())
		}
	}
	return "", fmt.Errorf("container %q not found in pod", ref.ContainerName)
}
