package objects

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/runlet/runlet/internal/podtest"
	"github.com/runlet/runlet/internal/polltest"
)

func podUsing(uid, cm string) *v1.Pod {
	return podtest.New(uid, podtest.Namespace("ns"), podtest.UID(uid), podtest.Volumes(v1.Volume{Name: "v",
		VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: cm}}}}))
}

// watchedNames lists the field selectors of the watches the client saw.
func watchedNames(c *fake.Clientset) []string {
	var out []string
	for _, a := range c.Actions() {
		if w, ok := a.(k8stesting.WatchAction); ok {
			out = append(out, w.GetWatchRestrictions().Fields.String())
		}
	}
	return out
}

// TestConfigMapsReferenceCounting: only referenced objects are watched, one
// reflector per object whatever the number of pods, and the object is
// forgotten with the last pod that refers to it.
func TestConfigMapsReferenceCounting(t *testing.T) {
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"}, Data: map[string]string{"k": "1"}}
	other := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "unrelated"}}
	client := fake.NewClientset(cm, other)
	stop := make(chan struct{})
	defer close(stop)
	m := NewConfigMaps(client, time.Minute, stop)

	if _, err := m.Get("ns", "cfg"); err == nil || !strings.Contains(err.Error(), "not registered") {
		t.Fatalf("Get before any pod refers to it: %v, want 'not registered'", err)
	}
	a, b := podUsing("a", "cfg"), podUsing("b", "cfg")
	m.RegisterPod(a)
	m.RegisterPod(b)
	m.RegisterPod(a) // idempotent
	got, err := m.Get("ns", "cfg")
	if err != nil || got.Data["k"] != "1" {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	if w := watchedNames(client); len(w) != 1 || w[0] != "metadata.name=cfg" {
		t.Fatalf("watches %v, want exactly one on metadata.name=cfg", w)
	}

	// Updates arrive through the watch.
	cm.Data["k"] = "2"
	if _, err := client.CoreV1().ConfigMaps("ns").Update(context.Background(), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	polltest.Eventually(t, 10*time.Second, "the update", func() bool {
		got, err := m.Get("ns", "cfg")
		return err == nil && got.Data["k"] == "2"
	})

	m.UnregisterPod(a)
	if _, err := m.Get("ns", "cfg"); err != nil {
		t.Fatalf("still referenced by b: %v", err)
	}
	m.UnregisterPod(b)
	if _, err := m.Get("ns", "cfg"); err == nil || !strings.Contains(err.Error(), "not registered") {
		t.Fatalf("after the last pod: %v, want 'not registered'", err)
	}
}

// TestConfigMapsMissingAndMoved: a missing object is NotFound in the
// kubelet's words and shows up once created; a pod whose spec changes moves
// its references.
func TestConfigMapsMissingAndMoved(t *testing.T) {
	client := fake.NewClientset()
	stop := make(chan struct{})
	defer close(stop)
	m := NewConfigMaps(client, time.Minute, stop)
	p := podUsing("a", "late")
	m.RegisterPod(p)
	_, err := m.Get("ns", "late")
	if !apierrors.IsNotFound(err) || err.Error() != `configmap "late" not found` {
		t.Fatalf("missing configMap: %v", err)
	}
	late := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "late"}}
	if _, err := client.CoreV1().ConfigMaps("ns").Create(context.Background(), late, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	polltest.Eventually(t, 10*time.Second, "the created configMap", func() bool { _, err := m.Get("ns", "late"); return err == nil })

	moved := podUsing("a", "next")
	m.RegisterPod(moved)
	if _, err := m.Get("ns", "late"); err == nil {
		t.Errorf("the old reference survived the pod's update")
	}
	if _, err := m.Get("ns", "next"); !apierrors.IsNotFound(err) {
		t.Errorf("new reference: %v, want NotFound", err)
	}
}

// TestSecretNames: what a pod refers to, and nothing else.
func TestSecretNames(t *testing.T) {
	pod := &v1.Pod{Spec: v1.PodSpec{
		ImagePullSecrets: []v1.LocalObjectReference{{Name: "pull"}},
		InitContainers: []v1.Container{{EnvFrom: []v1.EnvFromSource{{SecretRef: &v1.SecretEnvSource{
			LocalObjectReference: v1.LocalObjectReference{Name: "from"}}}}}},
		Containers: []v1.Container{{Env: []v1.EnvVar{{Name: "X", ValueFrom: &v1.EnvVarSource{
			SecretKeyRef: &v1.SecretKeySelector{LocalObjectReference: v1.LocalObjectReference{Name: "key"}}}}}}},
		Volumes: []v1.Volume{
			{Name: "s", VolumeSource: v1.VolumeSource{Secret: &v1.SecretVolumeSource{SecretName: "vol"}}},
			{Name: "p", VolumeSource: v1.VolumeSource{Projected: &v1.ProjectedVolumeSource{Sources: []v1.VolumeProjection{
				{Secret: &v1.SecretProjection{LocalObjectReference: v1.LocalObjectReference{Name: "proj"}}},
				{ConfigMap: &v1.ConfigMapProjection{LocalObjectReference: v1.LocalObjectReference{Name: "cm"}}},
			}}}},
		},
	}}
	got := SecretNames(pod)
	for _, want := range []string{"pull", "from", "key", "vol", "proj"} {
		if !got.Has(want) {
			t.Errorf("SecretNames lacks %s: %v", want, got)
		}
	}
	if got.Len() != 5 {
		t.Errorf("SecretNames = %v, want 5 names", got)
	}
	if cms := ConfigMapNames(pod); cms.Len() != 1 || !cms.Has("cm") {
		t.Errorf("ConfigMapNames = %v", cms)
	}
}
