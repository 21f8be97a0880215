package envvars

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// TestAPIObjectsConfirmCacheMisses: an object the informer has not seen yet
// is read from the API server; one missing there too is reported in the
// kubelet's words.
func TestAPIObjectsConfirmCacheMisses(t *testing.T) {
	cached := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cached"}, Data: map[string]string{"k": "c"}}
	late := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "late"}, Data: map[string]string{"k": "l"}}
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	_ = idx.Add(cached)
	sIdx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	a := &APIObjects{
		ConfigMapLister: corev1listers.NewConfigMapLister(idx),
		SecretLister:    corev1listers.NewSecretLister(sIdx),
		ServiceLister:   corev1listers.NewServiceLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})),
		Client:          fake.NewClientset(late),
	}
	for name, want := range map[string]string{"cached": "c", "late": "l"} {
		cm, err := a.ConfigMap("ns", name)
		if err != nil || cm.Data["k"] != want {
			t.Errorf("ConfigMap(%s) = %+v, %v; want data %q", name, cm, err, want)
		}
	}
	if _, err := a.ConfigMap("ns", "absent"); err == nil || err.Error() != `configmap "absent" not found` {
		t.Errorf("missing configMap: %v", err)
	}
	if _, err := a.Secret("ns", "absent"); err == nil || err.Error() != `secret "absent" not found` {
		t.Errorf("missing secret: %v", err)
	}
}
