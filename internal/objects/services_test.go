package objects

import (
	"sort"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func svc(ns, name string) *v1.Service {
	return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
}

func TestServicesOnlyOfReadNamespaces(t *testing.T) {
	client := fake.NewClientset(svc("a", "one"), svc("a", "two"), svc("b", "three"), svc("default", "kubernetes"))
	stop := make(chan struct{})
	defer close(stop)
	s := NewServices(client, stop)
	got, err := s.List("a")
	if err != nil || len(got) != 2 {
		t.Fatalf("List(a) = %d services, %v; want 2", len(got), err)
	}
	if _, err := s.List("default"); err != nil {
		t.Fatal(err)
	}
	w := s.Watched()
	sort.Strings(w)
	if len(w) != 2 || w[0] != "a" || w[1] != "default" {
		t.Fatalf("watched %v; want a and default only", w)
	}

	clock := time.Now().Add(time.Hour)
	s.now = func() time.Time { return clock }
	if _, err := s.List("a"); err != nil {
		t.Fatal(err)
	}
	s.dropIdle(clock.Add(-time.Minute)) // "default" was last read before
	if w := s.Watched(); len(w) != 1 || w[0] != "a" {
		t.Errorf("after dropping idle namespaces: %v; want a", w)
	}
}
