package envvars

import (
	"testing"
	"time"

	watched "github.com/runlet/runlet/internal/objects"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestAPIObjectsFromWatchedObjects: env reads the objects its pod refers
// to from the node's watched objects; a missing one is reported in the
// kubelet's words.
func TestAPIObjectsFromWatchedObjects(t *testing.T) {
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"}, Data: map[string]string{"k": "c"}}
	client := fake.NewClientset(cm)
	stop := make(chan struct{})
	defer close(stop)
	cms, secs := watched.NewConfigMaps(client, time.Minute, stop), watched.NewSecrets(client, time.Minute, stop)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", UID: "u"}, Spec: v1.PodSpec{Containers: []v1.Container{{
		Name: "c",
		EnvFrom: []v1.EnvFromSource{
			{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "cfg"}}},
			{ConfigMapRef: &v1.ConfigMapEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "absent"}}},
			{SecretRef: &v1.SecretEnvSource{LocalObjectReference: v1.LocalObjectReference{Name: "absent"}}},
		},
	}}}}
	cms.RegisterPod(pod)
	secs.RegisterPod(pod)
	a := &APIObjects{ConfigMaps: cms, Secrets: secs}
	if got, err := a.ConfigMap("ns", "cfg"); err != nil || got.Data["k"] != "c" {
		t.Errorf("ConfigMap(cfg) = %+v, %v", got, err)
	}
	if _, err := a.ConfigMap("ns", "absent"); err == nil || err.Error() != `configmap "absent" not found` {
		t.Errorf("missing configMap: %v", err)
	}
	if _, err := a.Secret("ns", "absent"); err == nil || err.Error() != `secret "absent" not found` {
		t.Errorf("missing secret: %v", err)
	}
}
