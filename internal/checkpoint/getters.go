package checkpoint

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The getters below stand in front of the API's (internal/objects, token,
// trustbundle) for the volumes and the environments of containers: online
// they ask the API and keep a copy of what the checkpoint's pods use;
// offline (Store.Offline) they answer from that copy alone, and never wait
// on an apiserver that does not answer.

// ConfigMapSource is the API's configMaps (internal/objects).
type ConfigMapSource interface {
	Get(namespace, name string) (*v1.ConfigMap, error)
	RegisterPod(*v1.Pod)
	UnregisterPod(*v1.Pod)
}

// SecretSource is the API's secrets (internal/objects).
type SecretSource interface {
	Get(namespace, name string) (*v1.Secret, error)
	RegisterPod(*v1.Pod)
	UnregisterPod(*v1.Pod)
}

// ConfigMaps serves configMaps through the checkpoint.
type ConfigMaps struct {
	ConfigMapSource
	Store *Store
}

// Get returns a configMap: from the API online, from the checkpoint offline.
func (c ConfigMaps) Get(namespace, name string) (*v1.ConfigMap, error) {
	rel := configMapFile(namespace, name)
	if c.Store.Offline() {
		var cm v1.ConfigMap
		return &cm, c.Store.offlineGet(rel, &cm, v1.Resource("configmap"), namespace, name)
	}
	cm, err := c.ConfigMapSource.Get(namespace, name)
	switch {
	case err == nil:
		c.Store.putObject(rel, cm.ResourceVersion, &v1.ConfigMap{ObjectMeta: stripped(&cm.ObjectMeta),
			Data: cm.Data, BinaryData: cm.BinaryData, Immutable: cm.Immutable})
	case apierrors.IsNotFound(err):
		c.Store.putObject(rel, "", nil)
	}
	return cm, err
}

// Secrets serves secrets through the checkpoint.
type Secrets struct {
	SecretSource
	Store *Store
}

// Get returns a secret: from the API online, from the checkpoint offline.
func (s Secrets) Get(namespace, name string) (*v1.Secret, error) {
	rel := secretFile(namespace, name)
	if s.Store.Offline() {
		var sec v1.Secret
		return &sec, s.Store.offlineGet(rel, &sec, v1.Resource("secret"), namespace, name)
	}
	sec, err := s.SecretSource.Get(namespace, name)
	switch {
	case err == nil:
		s.Store.putObject(rel, sec.ResourceVersion, &v1.Secret{ObjectMeta: stripped(&sec.ObjectMeta),
			Data: sec.Data, Type: sec.Type, Immutable: sec.Immutable})
	case apierrors.IsNotFound(err):
		s.Store.putObject(rel, "", nil)
	}
	return sec, err
}

// offlineGet reads an object of the checkpoint into v; one the API did not
// have is NotFound, as the API said; one never kept is an error that says
// why it is missing.
func (s *Store) offlineGet(rel string, v any, res schema.GroupResource, namespace, name string) error {
	found, err := s.getObject(rel, v)
	switch {
	case err != nil:
		return err
	case found == absent:
		return apierrors.NewNotFound(res, name)
	case found == notKept:
		return fmt.Errorf("%s %s/%s is not in the node's checkpoint, and the apiserver has not answered yet", res, namespace, name)
	}
	return nil
}
