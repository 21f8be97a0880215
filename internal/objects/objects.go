// Package objects keeps the configMaps and secrets that the node's pods refer
// to, as the kubelet's watch-based managers do: one reflector per referenced
// (namespace, name), with a field selector on the name, counted per pod and
// stopped with the last pod that refers to it. Nothing else in the cluster is
// watched, so unrelated secrets cost the node nothing.
package objects

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// ConfigMaps holds the configMaps registered pods refer to.
type ConfigMaps struct{ m Manager }

// Secrets holds the secrets registered pods refer to.
type Secrets struct{ m Manager }

// NewConfigMaps watches configMaps of registered pods. resync is how often
// users read them (the pods' resync period): a watch nobody read for five of
// those is stopped until the next read, as on the kubelet.
func NewConfigMaps(client kubernetes.Interface, resync time.Duration, stop <-chan struct{}) *ConfigMaps {
	list := func(ctx context.Context, ns string, opts metav1.ListOptions) (runtime.Object, error) {
		return client.CoreV1().ConfigMaps(ns).List(ctx, opts)
	}
	watchFn := func(ctx context.Context, ns string, opts metav1.ListOptions) (watch.Interface, error) {
		return client.CoreV1().ConfigMaps(ns).Watch(ctx, opts)
	}
	immutable := func(o runtime.Object) bool {
		cm, ok := o.(*v1.ConfigMap)
		return ok && cm.Immutable != nil && *cm.Immutable
	}
	return &ConfigMaps{NewWatchBasedManager(list, watchFn, func() runtime.Object { return &v1.ConfigMap{} }, immutable,
		listWatcher(client), v1.Resource("configmap"), resync, ConfigMapNames, stop)}
}

// NewSecrets watches secrets of registered pods; see NewConfigMaps.
func NewSecrets(client kubernetes.Interface, resync time.Duration, stop <-chan struct{}) *Secrets {
	list := func(ctx context.Context, ns string, opts metav1.ListOptions) (runtime.Object, error) {
		return client.CoreV1().Secrets(ns).List(ctx, opts)
	}
	watchFn := func(ctx context.Context, ns string, opts metav1.ListOptions) (watch.Interface, error) {
		return client.CoreV1().Secrets(ns).Watch(ctx, opts)
	}
	immutable := func(o runtime.Object) bool {
		s, ok := o.(*v1.Secret)
		return ok && s.Immutable != nil && *s.Immutable
	}
	return &Secrets{NewWatchBasedManager(list, watchFn, func() runtime.Object { return &v1.Secret{} }, immutable,
		listWatcher(client), v1.Resource("secret"), resync, SecretNames, stop)}
}

func listWatcher(client kubernetes.Interface) func(*cache.ListWatch) cache.ListerWatcher {
	return func(lw *cache.ListWatch) cache.ListerWatcher {
		return cache.ToListWatcherWithWatchListSemantics(lw, client)
	}
}

// Get returns a configMap of a registered pod; a missing one is NotFound
// (`configmap "x" not found`, the kubelet's words).
func (c *ConfigMaps) Get(namespace, name string) (*v1.ConfigMap, error) {
	o, err := c.m.GetObject(namespace, name)
	if err != nil {
		return nil, err
	}
	cm, ok := o.(*v1.ConfigMap)
	if !ok {
		return nil, fmt.Errorf("unexpected object type: %T", o)
	}
	return cm, nil
}

// RegisterPod starts watching what the pod refers to; idempotent, and a
// changed pod moves its references.
func (c *ConfigMaps) RegisterPod(pod *v1.Pod) { c.m.RegisterPod(pod) }

// UnregisterPod drops the pod's references.
func (c *ConfigMaps) UnregisterPod(pod *v1.Pod) { c.m.UnregisterPod(pod) }

// Get returns a secret of a registered pod; see ConfigMaps.Get.
func (s *Secrets) Get(namespace, name string) (*v1.Secret, error) {
	o, err := s.m.GetObject(namespace, name)
	if err != nil {
		return nil, err
	}
	sec, ok := o.(*v1.Secret)
	if !ok {
		return nil, fmt.Errorf("unexpected object type: %T", o)
	}
	return sec, nil
}

// RegisterPod starts watching what the pod refers to.
func (s *Secrets) RegisterPod(pod *v1.Pod) { s.m.RegisterPod(pod) }

// UnregisterPod drops the pod's references.
func (s *Secrets) UnregisterPod(pod *v1.Pod) { s.m.UnregisterPod(pod) }
