package volume

import (
	"fmt"

	"github.com/runlet/runlet/internal/volume/atomic"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// setUpSecret projects a secret's keys into dir, on a tmpfs so that secrets
// never reach the node's disk, as the kubelet does.
func (m *Manager) setUpSecret(pod *v1.Pod, name string, src *v1.SecretVolumeSource, dir string, args mountArgs) error {
	optional := isTrue(src.Optional)
	s, err := m.secret(pod.Namespace, src.SecretName, optional)
	if err != nil {
		return err
	}
	payload, err := secretPayload(src.Items, s, orDefaultMode(src.DefaultMode), optional)
	if err != nil {
		return err
	}
	return m.writeVolume(pod, name, v1.StorageMediumMemory, dir, payload, args)
}

// secret reads a secret; a missing optional one is empty.
func (m *Manager) secret(ns, name string, optional bool) (*v1.Secret, error) {
	if m.cfg.Secrets == nil {
		return nil, fmt.Errorf("couldn't get secret %s/%s: no API server to read it from", ns, name)
	}
	s, err := m.cfg.Secrets.Get(ns, name)
	if err != nil {
		if apierrors.IsNotFound(err) && optional {
			return &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}, nil
		}
		return nil, err
	}
	return s, nil
}

// secretPayload is the kubelet's secret.MakePayload.
func secretPayload(items []v1.KeyToPath, s *v1.Secret, defaultMode int32, optional bool) (map[string]atomic.FileProjection, error) {
	payload := make(map[string]atomic.FileProjection, len(s.Data))
	if len(items) == 0 {
		for k, v := range s.Data {
			payload[k] = atomic.FileProjection{Data: v, Mode: defaultMode}
		}
		return payload, nil
	}
	for _, ktp := range items {
		data, ok := s.Data[ktp.Key]
		if !ok {
			if optional {
				continue
			}
			return nil, fmt.Errorf("references non-existent secret key: %s", ktp.Key)
		}
		payload[ktp.Path] = atomic.FileProjection{Data: data, Mode: itemMode(ktp.Mode, defaultMode)}
	}
	return payload, nil
}
