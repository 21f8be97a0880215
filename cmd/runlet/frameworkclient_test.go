package main

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// TestFrameworkClientSelectsNothing: the framework's configMap, secret and
// service lists and watches select no object; pods are untouched.
func TestFrameworkClientSelectsNothing(t *testing.T) {
	real := fake.NewClientset(
		&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "cm"}},
		&v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "s"}},
		&v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "svc"}},
		&v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "a", Name: "p"}},
	)
	var selectors []string
	real.PrependReactor("list", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if l, ok := a.(k8stesting.ListAction); ok && a.GetResource().Resource != "pods" {
			selectors = append(selectors, l.GetListRestrictions().Fields.String())
		}
		return false, nil, nil
	})
	c := frameworkClient{real}
	ctx := context.Background()
	// The fake clientset does not filter by fields: what counts is what
	// the apiserver is asked.
	_, _ = c.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
	_, _ = c.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
	_, _ = c.CoreV1().Services("").List(ctx, metav1.ListOptions{FieldSelector: "metadata.namespace=a"})
	if pods, _ := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); len(pods.Items) != 1 {
		t.Fatalf("pods listed: %d; want the pod", len(pods.Items))
	}
	want := []string{"metadata.name=-", "metadata.name=-", "metadata.name=-,metadata.namespace=a"}
	if len(selectors) != 3 {
		t.Fatalf("selectors %v", selectors)
	}
	for i := range want {
		if selectors[i] != want[i] {
			t.Errorf("selector %q; want %q", selectors[i], want[i])
		}
	}
}
