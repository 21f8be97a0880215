package envvars

import (
	v1 "k8s.io/api/core/v1"
)

// APIObjects reads configMaps and secrets from the node's watched objects
// (internal/objects: only those its pods refer to, each watched on its own,
// as the kubelet's watch-based managers) and services from the namespaces the pods start containers in.
// A pod's references are registered when its volumes are set up, before
// any of its containers is created.
type APIObjects struct {
	ConfigMaps interface {
		Get(namespace, name string) (*v1.ConfigMap, error)
	}
	Secrets interface {
		Get(namespace, name string) (*v1.Secret, error)
	}
	// Services lists a namespace's services (internal/objects: only the
	// namespaces where pods start containers are watched).
	ServiceSource interface {
		List(namespace string) ([]*v1.Service, error)
	}
}

// ConfigMap implements Objects.
func (a *APIObjects) ConfigMap(ns, name string) (*v1.ConfigMap, error) {
	return a.ConfigMaps.Get(ns, name)
}

// Secret implements Objects.
func (a *APIObjects) Secret(ns, name string) (*v1.Secret, error) { return a.Secrets.Get(ns, name) }

// Services implements Objects.
func (a *APIObjects) Services(namespace string) ([]*v1.Service, error) {
	return a.ServiceSource.List(namespace)
}
