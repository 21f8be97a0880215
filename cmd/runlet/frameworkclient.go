package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
)

// frameworkClient is the client the virtual-kubelet framework gets. The
// framework starts cluster-wide configMap, secret and service informers for
// an environment resolution runlet does itself, from the objects its pods
// refer to (internal/objects). Their lists and watches here select nothing,
// so the cluster's other objects cost the node no memory.
type frameworkClient struct{ kubernetes.Interface }

func (c frameworkClient) CoreV1() corev1client.CoreV1Interface {
	return frameworkCoreV1{c.Interface.CoreV1()}
}

type frameworkCoreV1 struct{ corev1client.CoreV1Interface }

func (c frameworkCoreV1) ConfigMaps(ns string) corev1client.ConfigMapInterface {
	return noConfigMaps{c.CoreV1Interface.ConfigMaps(ns)}
}

func (c frameworkCoreV1) Secrets(ns string) corev1client.SecretInterface {
	return noSecrets{c.CoreV1Interface.Secrets(ns)}
}

func (c frameworkCoreV1) Services(ns string) corev1client.ServiceInterface {
	return noServices{c.CoreV1Interface.Services(ns)}
}

// selectNothing narrows a list or watch to a name no object can have.
func selectNothing(opts metav1.ListOptions) metav1.ListOptions {
	none := fields.OneTermEqualSelector("metadata.name", "-")
	if opts.FieldSelector != "" {
		if sel, err := fields.ParseSelector(opts.FieldSelector); err == nil {
			none = fields.AndSelectors(sel, none)
		}
	}
	opts.FieldSelector = none.String()
	return opts
}

type noConfigMaps struct {
	corev1client.ConfigMapInterface
}

func (c noConfigMaps) List(ctx context.Context, opts metav1.ListOptions) (*v1.ConfigMapList, error) {
	return c.ConfigMapInterface.List(ctx, selectNothing(opts))
}

func (c noConfigMaps) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return c.ConfigMapInterface.Watch(ctx, selectNothing(opts))
}

type noSecrets struct{ corev1client.SecretInterface }

func (c noSecrets) List(ctx context.Context, opts metav1.ListOptions) (*v1.SecretList, error) {
	return c.SecretInterface.List(ctx, selectNothing(opts))
}

func (c noSecrets) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return c.SecretInterface.Watch(ctx, selectNothing(opts))
}

type noServices struct{ corev1client.ServiceInterface }

func (c noServices) List(ctx context.Context, opts metav1.ListOptions) (*v1.ServiceList, error) {
	return c.ServiceInterface.List(ctx, selectNothing(opts))
}

func (c noServices) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return c.ServiceInterface.Watch(ctx, selectNothing(opts))
}
