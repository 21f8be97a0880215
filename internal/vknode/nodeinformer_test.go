package vknode

import (
	"context"
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

// TestStatusReadsComeFromTheNodesWatch: the reads before each status patch
// are served by the node's own watch, as the kubelet serves them from its
// node informer; after a failed write the next read goes to the API.
func TestStatusReadsComeFromTheNodesWatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewClientset(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}})
	f := newCoreFactory(client, 0)
	inf := newNodeInformer(f, "n1")
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.Informer().HasSynced) {
		t.Fatal("the node informer never synced")
	}
	if sel := listSelector(client); sel != "metadata.name=n1" {
		t.Errorf("the node informer lists nodes with field selector %q; want its own node's, metadata.name=n1", sel)
	}
	nodes := &cachedNodes{NodeInterface: client.CoreV1().Nodes(), lister: inf.Lister(), synced: inf.Informer().HasSynced}
	client.ClearActions()

	for range 3 {
		if n, err := nodes.Get(ctx, "n1", metav1.GetOptions{}); err != nil || n.Name != "n1" {
			t.Fatalf("Get = %v, %v; want node n1", n, err)
		}
	}
	if gets := countGets(client); gets != 0 {
		t.Errorf("three reads went to the API %d times; want 0: the watch has the node", gets)
	}

	client.PrependReactor("patch", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("apiserver unavailable")
	})
	if _, err := nodes.Patch(ctx, "n1", types.StrategicMergePatchType, []byte(`{}`), metav1.PatchOptions{}, "status"); err == nil {
		t.Fatal("the patch reactor did not fail the patch")
	}
	if _, err := nodes.Get(ctx, "n1", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := nodes.Get(ctx, "n1", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if gets := countGets(client); gets != 1 {
		t.Errorf("after a failed patch, two reads went to the API %d times; want 1 (the retry's), then the watch again", gets)
	}
}

// listSelector is the field selector of the first list of nodes.
func listSelector(c *fake.Clientset) string {
	for _, a := range c.Actions() {
		if l, ok := a.(k8stesting.ListAction); ok && a.GetResource().Resource == "nodes" {
			return l.GetListRestrictions().Fields.String()
		}
	}
	return ""
}

func countGets(c *fake.Clientset) int {
	n := 0
	for _, a := range c.Actions() {
		if a.GetVerb() == "get" && a.GetResource().Resource == "nodes" {
			n++
		}
	}
	return n
}
