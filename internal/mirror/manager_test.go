package mirror

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/podconfig"
	"github.com/runlet/runlet/internal/podtest"
	logtest "github.com/sirupsen/logrus/hooks/test"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
)

const nodeName = "n1"

// env is a fake apiserver and a lister the test syncs by hand, so each
// step of the reconcile is deterministic.
type env struct {
	client  *fake.Clientset
	indexer cache.Indexer
	m       *Manager
}

func newEnv(t *testing.T, objs ...runtime.Object) *env {
	t.Helper()
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName, UID: "node-uid"}}
	client := fake.NewClientset(append(objs, node)...)
	var n atomic.Int64
	// The fake assigns no UIDs; the apiserver does.
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		a.(k8stesting.CreateAction).GetObject().(*v1.Pod).UID = types.UID(fmt.Sprintf("api-uid-%d", n.Add(1)))
		return false, nil, nil
	})
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	log, _ := logtest.NewNullLogger()
	e := &env{client: client, indexer: indexer}
	e.m = New(Config{Client: client, NodeName: nodeName, Log: log, Pods: corev1listers.NewPodLister(indexer)})
	e.resync(t)
	return e
}

// resync makes the lister match the fake apiserver, as the informer would.
func (e *env) resync(t *testing.T) {
	t.Helper()
	list, err := e.client.CoreV1().Pods("").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	objs := make([]interface{}, 0, len(list.Items))
	for i := range list.Items {
		objs = append(objs, &list.Items[i])
	}
	if err := e.indexer.Replace(objs, ""); err != nil {
		t.Fatal(err)
	}
}

// step runs one round of the manager's work on a fresh lister.
func (e *env) step(t *testing.T) {
	t.Helper()
	e.resync(t)
	e.m.reconcile(context.Background())
	e.resync(t)
}

func (e *env) get(t *testing.T, ns, name string) *v1.Pod {
	t.Helper()
	p, err := e.client.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func staticPod(name, hash string) *v1.Pod {
	return podtest.New(name+"-"+nodeName, podtest.Namespace("default"), podtest.UID(hash),
		podtest.Labels(map[string]string{"app": name}),
		podtest.Annotations(map[string]string{
			podconfig.ConfigHashAnnotation: hash, podconfig.ConfigSourceAnnotation: podconfig.FileSource,
		}),
		podtest.NodeName(nodeName), podtest.Containers(v1.Container{Name: "c", Image: "busybox"}))
}

func mirrorPod(name, hash string) *v1.Pod {
	p := mirrorPodFor(staticPod(name, hash), nodeName, "node-uid")
	p.UID = types.UID("old-" + hash)
	return p
}

func TestCreateMirror(t *testing.T) {
	e := newEnv(t)
	sp := staticPod("web", "h1")
	e.m.Sync([]*v1.Pod{sp}, nil, false)
	e.step(t)

	mp := e.get(t, "default", "web-n1")
	if mp == nil {
		t.Fatal("no mirror pod created")
	}
	if mp.Annotations[podconfig.ConfigMirrorAnnotation] != "h1" || mp.Labels["app"] != "web" {
		t.Errorf("mirror annotations %v labels %v", mp.Annotations, mp.Labels)
	}
	refs := mp.OwnerReferences
	if len(refs) != 1 || refs[0].Kind != "Node" || refs[0].APIVersion != "v1" || refs[0].Name != nodeName ||
		refs[0].UID != "node-uid" || refs[0].Controller == nil || !*refs[0].Controller {
		t.Errorf("ownerReferences = %+v, want the node as controller", refs)
	}
	if mp.Spec.NodeName != nodeName || mp.UID == sp.UID {
		t.Errorf("nodeName %q, uid %q: want the node and an apiserver UID", mp.Spec.NodeName, mp.UID)
	}
	if got, ok := e.m.StaticPod("default", "web-n1"); !ok || got != sp {
		t.Error("StaticPod does not find the static pod by the mirror's name")
	}
}

func TestMirrorRecreated(t *testing.T) {
	e := newEnv(t)
	e.m.Sync([]*v1.Pod{staticPod("web", "h1")}, nil, true)
	e.step(t)
	first := e.get(t, "default", "web-n1")

	// Deleted in the API: created again.
	if err := e.client.CoreV1().Pods("default").Delete(context.Background(), "web-n1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.step(t)
	second := e.get(t, "default", "web-n1")
	if second == nil || second.UID == first.UID {
		t.Fatalf("after a delete: mirror %v, want a new one", second)
	}

	// Being deleted gracefully: replaced at once.
	now := metav1.Now()
	second.DeletionTimestamp = &now
	if _, err := e.client.CoreV1().Pods("default").Update(context.Background(), second, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.step(t)
	third := e.get(t, "default", "web-n1")
	if third == nil || third.UID == second.UID || third.DeletionTimestamp != nil {
		t.Fatalf("after a graceful delete: mirror %v, want a new live one", third)
	}
}

func TestManifestChangeReplacesMirror(t *testing.T) {
	old := staticPod("web", "h1")
	e := newEnv(t, mirrorPod("web", "h1"))
	// The old pod is still stopping while the new one, same name, is desired.
	e.m.Sync([]*v1.Pod{staticPod("web", "h2")}, []*v1.Pod{old}, true)
	e.step(t)
	mp := e.get(t, "default", "web-n1")
	if mp == nil || mp.Annotations[podconfig.ConfigMirrorAnnotation] != "h2" {
		t.Fatalf("mirror = %v, want one with hash h2", mp)
	}
}

func TestOrphanedMirrorsDeleted(t *testing.T) {
	regular := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "api-pod", Namespace: "default"}, Spec: v1.PodSpec{NodeName: nodeName}}
	e := newEnv(t, mirrorPod("web", "h1"), mirrorPod("gone", "h9"), mirrorPod("stopping", "h5"), regular)
	static := []*v1.Pod{staticPod("web", "h1")}
	terminating := []*v1.Pod{staticPod("stopping", "h5")}

	// Not all sources seen yet: nothing is deleted.
	e.m.Sync(static, terminating, false)
	e.step(t)
	if e.get(t, "default", "gone-n1") == nil {
		t.Fatal("an orphan was deleted before every source was seen")
	}

	e.m.Sync(static, terminating, true)
	e.step(t)
	if e.get(t, "default", "gone-n1") != nil {
		t.Error("the orphaned mirror pod is still there")
	}
	for _, name := range []string{"web-n1", "stopping-n1", "api-pod"} {
		if e.get(t, "default", name) == nil {
			t.Errorf("%s was deleted", name)
		}
	}

	// The terminating pod finished: its mirror goes too.
	e.m.Sync(static, nil, true)
	e.step(t)
	if e.get(t, "default", "stopping-n1") != nil {
		t.Error("the mirror of a finished static pod is still there")
	}
}

// TestMirrorCreatedIsReported: each mirror pod created, the first and a
// recreated one, is reported, so the static pod's status is written to it.
func TestMirrorCreatedIsReported(t *testing.T) {
	e := newEnv(t)
	var created []string
	e.m.cfg.Created = func(static *v1.Pod) { created = append(created, string(static.UID)) }
	sp := staticPod("web", "h1")
	e.m.Sync([]*v1.Pod{sp}, nil, true)
	e.step(t)
	e.step(t) // the mirror exists: nothing to report
	if err := e.client.CoreV1().Pods("default").Delete(context.Background(), "web-n1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.step(t)
	if len(created) != 2 || created[0] != string(sp.UID) || created[1] != string(sp.UID) {
		t.Errorf("created reported for %v; want the static pod twice", created)
	}
}

func TestNoNodeNoMirror(t *testing.T) {
	e := newEnv(t)
	if err := e.client.CoreV1().Nodes().Delete(context.Background(), nodeName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e.m.Sync([]*v1.Pod{staticPod("web", "h1")}, nil, true)
	e.step(t)
	if e.get(t, "default", "web-n1") != nil {
		t.Error("a mirror pod was created without a node to own it")
	}
}

// TestRunWithInformer drives the manager as runlet does: an informer feeds
// the lister and the sync loop calls Sync every housekeeping period.
func TestRunWithInformer(t *testing.T) {
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName, UID: "node-uid"}}
	client := fake.NewClientset(node)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory := informers.NewSharedInformerFactory(client, 0)
	lister := factory.Core().V1().Pods().Lister()
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	log, _ := logtest.NewNullLogger()
	m := New(Config{Client: client, NodeName: nodeName, Log: log, Pods: lister})
	go m.Run(ctx)
	static := []*v1.Pod{staticPod("web", "h1")}
	go wait.Until(func() { m.Sync(static, nil, true) }, 20*time.Millisecond, ctx.Done())

	waitMirror := func(what string, ok func(*v1.Pod) bool) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			p, err := client.CoreV1().Pods("default").Get(ctx, "web-n1", metav1.GetOptions{})
			return err == nil && ok(p), nil
		})
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
	waitMirror("the mirror pod", func(*v1.Pod) bool { return true })
	if err := client.CoreV1().Pods("default").Delete(ctx, "web-n1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitMirror("the mirror pod to come back", func(p *v1.Pod) bool { return p.Annotations[podconfig.ConfigMirrorAnnotation] == "h1" })
}
