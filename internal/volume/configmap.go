package volume

import (
	"fmt"

	"github.com/runlet/runlet/internal/volume/atomic"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// setUpConfigMap projects a configMap's keys into dir (on disk, as the
// kubelet does) with the atomic writer.
func (m *Manager) setUpConfigMap(pod *v1.Pod, name string, src *v1.ConfigMapVolumeSource, dir string, args mountArgs) error {
	optional := isTrue(src.Optional)
	cm, err := m.configMap(pod.Namespace, src.Name, optional)
	if err != nil {
		return err
	}
	payload, err := configMapPayload(src.Items, cm, orDefaultMode(src.DefaultMode), optional)
	if err != nil {
		return err
	}
	return m.writeVolume(pod, name, v1.StorageMediumDefault, dir, payload, args)
}

// configMap reads a configMap; a missing optional one is empty.
func (m *Manager) configMap(ns, name string, optional bool) (*v1.ConfigMap, error) {
	if m.cfg.ConfigMaps == nil {
		return nil, fmt.Errorf("couldn't get configMap %s/%s: no API server to read it from", ns, name)
	}
	cm, err := m.cfg.ConfigMaps.Get(ns, name)
	if err != nil {
		if apierrors.IsNotFound(err) && optional {
			return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, nil
		}
		return nil, err
	}
	return cm, nil
}

// configMapPayload is the kubelet's configmap.MakePayload: every key (data
// and binaryData) or the listed items, with their modes.
func configMapPayload(items []v1.KeyToPath, cm *v1.ConfigMap, defaultMode int32, optional bool) (map[string]atomic.FileProjection, error) {
	payload := make(map[string]atomic.FileProjection, len(cm.Data)+len(cm.BinaryData))
	if len(items) == 0 {
		for k, v := range cm.Data {
			payload[k] = atomic.FileProjection{Data: []byte(v), Mode: defaultMode}
		}
		for k, v := range cm.BinaryData {
			payload[k] = atomic.FileProjection{Data: v, Mode: defaultMode}
		}
		return payload, nil
	}
	for _, ktp := range items {
		var data []byte
		if s, ok := cm.Data[ktp.Key]; ok {
			data = []byte(s)
		} else if b, ok := cm.BinaryData[ktp.Key]; ok {
			data = b
		} else {
			if optional {
				continue
			}
			return nil, fmt.Errorf("configmap references non-existent config key: %s", ktp.Key)
		}
		payload[ktp.Path] = atomic.FileProjection{Data: data, Mode: itemMode(ktp.Mode, defaultMode)}
	}
	return payload, nil
}

// writeVolume is what the configMap, secret, projected and downwardAPI
// plugins share: the wrapped emptyDir, the directories of volumes mounted
// inside this one, then the atomic write, with the pod's fsGroup applied
// to the new files before they are published.
func (m *Manager) writeVolume(pod *v1.Pod, name string, medium v1.StorageMedium, dir string, payload map[string]atomic.FileProjection, args mountArgs) error {
	if err := m.setUpEmptyDir(pod, name, v1.EmptyDirVolumeSource{Medium: medium}, dir, args); err != nil {
		return err
	}
	if err := makeNestedMountpoints(name, dir, *pod); err != nil {
		return err
	}
	w, err := atomic.NewAtomicWriter(dir, fmt.Sprintf("pod %s/%s volume %s", pod.Namespace, pod.Name, name))
	if err != nil {
		return err
	}
	setPerms := func(string) error {
		// New files may be created outside the timestamped directory on the
		// first write: the whole volume, not only the new directory.
		return changePermissions(dir, args.fsGroup, nil, true)
	}
	return w.Write(payload, setPerms)
}

func orDefaultMode(mode *int32) int32 {
	if mode == nil {
		return v1.ConfigMapVolumeSourceDefaultMode // 0644, the API's default for every projection
	}
	return *mode
}

func itemMode(mode *int32, defaultMode int32) int32 {
	if mode != nil {
		return *mode
	}
	return defaultMode
}

func isTrue(b *bool) bool { return b != nil && *b }
