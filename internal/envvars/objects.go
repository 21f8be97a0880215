package envvars

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
)

// APIObjects reads configMaps, secrets and services from informer caches.
// A cache miss is confirmed with the API server: an object created just
// before its pod may not have reached the cache yet, and a false "not found"
// would hold the container back for a whole retry period.
type APIObjects struct {
	ConfigMapLister corev1listers.ConfigMapLister
	SecretLister    corev1listers.SecretLister
	ServiceLister   corev1listers.ServiceLister
	Client          kubernetes.Interface
}

const getTimeout = 10 * time.Second

// ConfigMap implements Objects.
func (a *APIObjects) ConfigMap(ns, name string) (*v1.ConfigMap, error) {
	cm, err := a.ConfigMapLister.ConfigMaps(ns).Get(name)
	if apierrors.IsNotFound(err) && a.Client != nil {
		ctx, cancel := context.WithTimeout(context.Background(), getTimeout)
		defer cancel()
		cm, err = a.Client.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
	}
	return cm, notFound(err, "configmap", name)
}

// Secret implements Objects.
func (a *APIObjects) Secret(ns, name string) (*v1.Secret, error) {
	s, err := a.SecretLister.Secrets(ns).Get(name)
	if apierrors.IsNotFound(err) && a.Client != nil {
		ctx, cancel := context.WithTimeout(context.Background(), getTimeout)
		defer cancel()
		s, err = a.Client.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
	}
	return s, notFound(err, "secret", name)
}

// notFound words a missing object as the kubelet does (`configmap "x" not
// found`), whichever of the cache or the API server said so.
func notFound(err error, kind, name string) error {
	if apierrors.IsNotFound(err) {
		return apierrors.NewNotFound(v1.Resource(kind), name)
	}
	return err
}

// Services implements Objects.
func (a *APIObjects) Services() ([]*v1.Service, error) {
	return a.ServiceLister.List(labels.Everything())
}
