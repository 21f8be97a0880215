package uninstall

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/logtest"
	"github.com/runlet/runlet/internal/podtest"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

var (
	runletLabels = map[string]string{"app.kubernetes.io/name": "runlet", "app.kubernetes.io/instance": "edge", "app.kubernetes.io/component": "node"}
	nodeLabels   = map[string]string{"app.kubernetes.io/name": "runlet", "app.kubernetes.io/instance": "edge"}
)

func node(name string, ready bool, l map[string]string) *v1.Node {
	st := v1.ConditionFalse
	if ready {
		st = v1.ConditionTrue
	}
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
		Status: v1.NodeStatus{Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: st}}}}
}

func pod(ns, name, nodeName string, l, ann map[string]string) *v1.Pod {
	return podtest.New(name, podtest.Namespace(ns), podtest.UID("uid-"+name), podtest.Labels(l), podtest.Annotations(ann),
		podtest.NodeName(nodeName))
}

// cluster has release "edge": its Deployment and runlet pod in runlet-system
// (on host-1), its node "edge" with a workload pod and a mirror pod, and an
// unrelated node with a pod of its own.
func cluster(nodeReady bool) *fake.Clientset {
	c := fake.NewSimpleClientset(
		node("edge", nodeReady, nodeLabels),
		node("other", true, map[string]string{"app.kubernetes.io/name": "runlet", "app.kubernetes.io/instance": "other"}),
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "runlet-system", Name: "edge"},
			Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: runletLabels}}},
		pod("runlet-system", "edge-runlet", "host-1", runletLabels, nil),
		pod("default", "web", "edge", nil, nil),
		pod("default", "static-edge", "edge", nil, map[string]string{v1.MirrorPodAnnotationKey: "x"}),
		pod("default", "elsewhere", "other", nil, nil),
	)
	// The fake has no field selectors, no garbage collector and no
	// kubelet: list by node, and let a deleted Deployment take its pods.
	c.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		fs := a.(k8stesting.ListAction).GetListRestrictions().Fields
		if fs.Empty() {
			return false, nil, nil
		}
		objs, _ := c.Tracker().List(v1.SchemeGroupVersion.WithResource("pods"), v1.SchemeGroupVersion.WithKind("Pod"), a.GetNamespace())
		out := &v1.PodList{}
		for _, p := range objs.(*v1.PodList).Items {
			if fs.Matches(podFields(&p)) {
				out.Items = append(out.Items, p)
			}
		}
		return true, out, nil
	})
	c.PrependReactor("delete", "deployments", func(a k8stesting.Action) (bool, runtime.Object, error) {
		_ = c.Tracker().Delete(v1.SchemeGroupVersion.WithResource("pods"), "runlet-system", "edge-runlet")
		return false, nil, nil
	})
	return c
}

type podFieldSet map[string]string

func (f podFieldSet) Has(k string) bool   { _, ok := f[k]; return ok }
func (f podFieldSet) Get(k string) string { return f[k] }

func podFields(p *v1.Pod) podFieldSet { return podFieldSet{"spec.nodeName": p.Spec.NodeName} }

func run(t *testing.T, c *fake.Clientset, pods string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return Run(ctx, c, Options{
		Namespace: "runlet-system", Workload: "deployment/edge", Pods: pods, Poll: 10 * time.Millisecond,
		NodeSelector: "app.kubernetes.io/name=runlet,app.kubernetes.io/instance=edge", Log: logtest.Discard(),
	})
}

// steps lists the writes in order, as "verb resource/name".
func steps(c *fake.Clientset) []string {
	var out []string
	for _, a := range c.Actions() {
		switch a := a.(type) {
		case k8stesting.DeleteAction:
			out = append(out, "delete "+a.GetResource().Resource+"/"+a.GetName())
		case k8stesting.PatchAction:
			out = append(out, "patch "+a.GetResource().Resource+"/"+a.GetName())
		}
	}
	return out
}

func TestStopDrainsThenStopsRunletThenDeletesTheNode(t *testing.T) {
	c := cluster(true)
	if err := run(t, c, PodsStop); err != nil {
		t.Fatal(err)
	}
	want := "patch nodes/edge, delete pods/web, delete deployments/edge, delete nodes/edge"
	if got := strings.Join(steps(c), ", "); got != want {
		t.Errorf("steps:\n got %s\nwant %s", got, want)
	}
	if _, err := c.CoreV1().Nodes().Get(context.Background(), "other", metav1.GetOptions{}); err != nil {
		t.Errorf("another release's node was touched: %v", err)
	}
	for _, a := range c.Actions() {
		if d, ok := a.(k8stesting.DeleteActionImpl); ok && d.GetResource().Resource == "pods" && d.DeleteOptions.GracePeriodSeconds != nil {
			t.Errorf("pod %s deleted with grace %d: a drain keeps each pod's own grace period", d.Name, *d.DeleteOptions.GracePeriodSeconds)
		}
	}
}

func TestKeepLeavesThePodsAlone(t *testing.T) {
	c := cluster(true)
	if err := run(t, c, PodsKeep); err != nil {
		t.Fatal(err)
	}
	want := "delete deployments/edge, delete nodes/edge"
	if got := strings.Join(steps(c), ", "); got != want {
		t.Errorf("steps:\n got %s\nwant %s", got, want)
	}
}

func TestStopForceDeletesOnANodeThatIsNotReady(t *testing.T) {
	c := cluster(false)
	c.PrependReactor("delete", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		d := a.(k8stesting.DeleteActionImpl)
		if d.DeleteOptions.GracePeriodSeconds == nil {
			return true, nil, nil // graceful: only a kubelet would finish it
		}
		return false, nil, nil
	})
	if err := run(t, c, PodsStop); err != nil {
		t.Fatal(err)
	}
	var forced bool
	for _, a := range c.Actions() {
		if d, ok := a.(k8stesting.DeleteActionImpl); ok && d.Name == "web" && d.DeleteOptions.GracePeriodSeconds != nil && *d.DeleteOptions.GracePeriodSeconds == 0 {
			forced = true
		}
	}
	if !forced {
		t.Errorf("the pod of a NotReady node was not force-deleted: %v", steps(c))
	}
}

func TestBadOptions(t *testing.T) {
	c := cluster(true)
	for _, o := range []Options{
		{Workload: "statefulset/edge", Pods: PodsStop, NodeSelector: "a=b"},
		{Workload: "deployment/edge", Pods: "orphan", NodeSelector: "a=b"},
		{Workload: "deployment/edge", Pods: PodsStop, NodeSelector: ""},
	} {
		if err := Run(context.Background(), c, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
	if len(c.Actions()) != 0 {
		t.Errorf("bad options still acted: %v", steps(c))
	}
}
