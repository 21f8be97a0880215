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
	return through(c.Store, configMapFile(namespace, name), v1.Resource("configmap"), namespace, name,
		func() (*v1.ConfigMap, error) { return c.ConfigMapSource.Get(namespace, name) },
		func(cm *v1.ConfigMap) (string, any) {
			return cm.ResourceVersion, &v1.ConfigMap{ObjectMeta: stripped(&cm.ObjectMeta), Data: cm.Data, BinaryData: cm.BinaryData, Immutable: cm.Immutable}
		})
}

// Secrets serves secrets through the checkpoint.
type Secrets struct {
	SecretSource
	Store *Store
}

// Get returns a secret: from the API online, from the checkpoint offline.
func (s Secrets) Get(namespace, name string) (*v1.Secret, error) {
	return through(s.Store, secretFile(namespace, name), v1.Resource("secret"), namespace, name,
		func() (*v1.Secret, error) { return s.SecretSource.Get(namespace, name) },
		func(sec *v1.Secret) (string, any) {
			return sec.ResourceVersion, &v1.Secret{ObjectMeta: stripped(&sec.ObjectMeta), Data: sec.Data, Type: sec.Type, Immutable: sec.Immutable}
		})
}

// through answers a get of one object, kept as the file rel: online from
// the API, keeping what keep makes of the answer (with its version), or
// that the API has no such object; offline from the checkpoint alone.
func through[T any](s *Store, rel string, res schema.GroupResource, namespace, name string,
	fromAPI func() (*T, error), keep func(*T) (version string, kept any)) (*T, error) {
	if s.Offline() {
		var v T
		if err := s.offlineGet(rel, &v, res, namespace, name); err != nil {
			return nil, err
		}
		return &v, nil
	}
	obj, err := fromAPI()
	switch {
	case err == nil:
		version, kept := keep(obj)
		s.putObject(rel, version, kept)
	case apierrors.IsNotFound(err):
		s.putObject(rel, "", nil)
	}
	return obj, err
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
