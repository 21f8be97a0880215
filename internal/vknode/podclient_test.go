package vknode

import (
	"context"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// TestFinalDeletes: the pod controller's force delete of a pod being
// deleted reaches the provider, not the API, which keeps the object for the
// status manager's final status; other deletes go through.
func TestFinalDeletes(t *testing.T) {
	now := metav1.Now()
	pod := func(name string, deleting bool, annotations map[string]string) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID(name + "-uid"), Annotations: annotations}}
		if deleting {
			p.DeletionTimestamp = &now
		}
		return p
	}
	objs := []*v1.Pod{
		pod("terminating", true, nil),
		pod("live", false, nil),
		pod("mirror", true, map[string]string{v1.MirrorPodAnnotationKey: "x"}),
	}
	client := fake.NewClientset()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, p := range objs {
		if _, err := client.CoreV1().Pods("ns").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		_ = idx.Add(p)
	}
	prov := &pods{}
	c := podClient{PodsGetter: client.CoreV1(), pods: corev1listers.NewPodLister(idx), provider: prov}
	del := func(name string, uid types.UID) error {
		opts := metav1.NewDeleteOptions(0)
		opts.Preconditions = metav1.NewUIDPreconditions(string(uid))
		return c.Pods("ns").Delete(context.Background(), name, *opts)
	}
	inAPI := func(name string) bool {
		_, err := client.CoreV1().Pods("ns").Get(context.Background(), name, metav1.GetOptions{})
		return err == nil
	}

	if err := del("terminating", "terminating-uid"); err != nil {
		t.Fatal(err)
	}
	if !inAPI("terminating") || !slices.Equal(prov.deleted, []string{"terminating"}) {
		t.Errorf("force delete of a terminating pod: in the API %v, handed to the provider %v; want kept, handed", inAPI("terminating"), prov.deleted)
	}
	for _, name := range []string{"live", "mirror"} {
		if err := del(name, types.UID(name+"-uid")); err != nil {
			t.Fatal(err)
		}
		if inAPI(name) {
			t.Errorf("delete of %s was not sent to the API", name)
		}
	}
	if err := del("terminating", "other-uid"); !apierrors.IsConflict(err) {
		t.Errorf("delete with another UID: %v; want a conflict", err)
	}
	if err := del("gone", "gone-uid"); !apierrors.IsNotFound(err) {
		t.Errorf("delete of an unknown pod: %v; want NotFound", err)
	}
	if len(prov.deleted) != 1 {
		t.Errorf("provider got %v; want only the terminating pod", prov.deleted)
	}
}

// TestUpdateStatusRefused: the framework never writes a status; the
// provider's copy in the API would overwrite what others set.
func TestUpdateStatusRefused(t *testing.T) {
	api := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job-pod", UID: "uid-1"}}
	client := fake.NewClientset(api.DeepCopy())
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	_ = idx.Add(api.DeepCopy())
	c := podClient{PodsGetter: client.CoreV1(), pods: corev1listers.NewPodLister(idx), provider: &pods{}}
	fromProvider := api.DeepCopy()
	fromProvider.Status.Phase = v1.PodSucceeded
	if _, err := c.Pods("ns").UpdateStatus(context.Background(), fromProvider, metav1.UpdateOptions{}); err == nil {
		t.Fatal("the framework's status write went through")
	}
	if got, _ := client.CoreV1().Pods("ns").Get(context.Background(), "job-pod", metav1.GetOptions{}); got.Status.Phase != "" {
		t.Errorf("API pod phase %s; want none written", got.Status.Phase)
	}
}
