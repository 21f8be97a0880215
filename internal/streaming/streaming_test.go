package streaming

import (
	"context"
	"testing"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

type noAPIPods struct{}

func (noAPIPods) GetPodByName(string, string) (*v1.Pod, bool) { return nil, false }

type staticPods map[string]*v1.Pod

func (s staticPods) StaticPod(ns, name string) (*v1.Pod, bool) {
	p, ok := s[ns+"/"+name]
	return p, ok
}

type noRuntime struct{}

func (noRuntime) RuntimeStatus(types.UID) *runtime.PodStatus { return &runtime.PodStatus{} }

// TestStaticPodContainerLookup: the kubelet API (logs, exec) finds a static
// pod by its mirror pod's name.
func TestStaticPodContainerLookup(t *testing.T) {
	static := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web-n1", UID: "us"}}
	s := New(Config{Pods: noAPIPods{}, Static: staticPods{"ns/web-n1": static}, Backend: noRuntime{}})
	_, _, err := s.container(context.Background(), "ns", "web-n1", "c", false)
	if err == nil || err.Error() != `container "c" in pod "web-n1" not found` {
		t.Errorf("container lookup = %v, want the static pod found (and its container missing)", err)
	}
	if _, _, err := s.container(context.Background(), "ns", "other", "c", false); !errdefs.IsNotFound(err) {
		t.Errorf("lookup of an unknown pod = %v; want NotFound", err)
	}
}
