// Package uninstall takes a runlet release out of a cluster, as the chart's
// pre-delete hook runs it: the release's nodes are drained (their pods
// stopped) or left as they are, runlet itself is stopped, and then the
// nodes are deleted. Deleting a node while its runlet still runs would not
// hold: a restarted runlet registers it again.
package uninstall

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// What happens to the pods running on the release's nodes.
const (
	// PodsStop deletes them, with their grace periods, while runlet still
	// runs, so it stops and removes their containers: a drain.
	PodsStop = "stop"
	// PodsKeep leaves their containers running in podman. Without a node
	// the pods' API objects go (the pod garbage collector deletes them);
	// a runlet started again under the same node name removes the
	// containers as orphans.
	PodsKeep = "keep"
)

// Options say what to take out.
type Options struct {
	// Namespace and Workload ("deployment/<name>" or "daemonset/<name>")
	// name the runlet workload to stop.
	Namespace, Workload string
	// NodeSelector selects the release's nodes by label.
	NodeSelector string
	// Pods is PodsStop or PodsKeep.
	Pods string
	// Poll is how often progress is checked (1 s when zero).
	Poll time.Duration
	Log  logrus.FieldLogger
}

// Run drains (or not) the nodes, stops runlet and deletes the nodes. It
// returns once all of that is done, or ctx ends.
func Run(ctx context.Context, client kubernetes.Interface, o Options) error {
	if o.Poll == 0 {
		o.Poll = time.Second
	}
	kind, name, err := parseWorkload(o.Workload)
	if err != nil {
		return err
	}
	if o.Pods != PodsStop && o.Pods != PodsKeep {
		return fmt.Errorf("pods: %q is neither %s nor %s", o.Pods, PodsStop, PodsKeep)
	}
	selector, err := labels.Parse(o.NodeSelector)
	if err != nil || selector.Empty() {
		return fmt.Errorf("node selector %q: want the release's node labels (%v)", o.NodeSelector, err)
	}
	u := &uninstaller{client: client, o: o, log: o.Log}
	nodes, err := u.nodes(ctx, selector)
	if err != nil {
		return err
	}
	if o.Pods == PodsStop {
		if err := u.drain(ctx, nodes); err != nil {
			return err
		}
	}
	if err := u.stopWorkload(ctx, kind, name); err != nil {
		return err
	}
	// Nodes registered while this ran (a DaemonSet's new host) go too.
	if nodes, err = u.nodes(ctx, selector); err != nil {
		return err
	}
	for _, n := range nodes {
		if err := client.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting node %s: %w", n.Name, err)
		}
		u.log.WithField("node", n.Name).Info("node deleted")
	}
	return nil
}

type uninstaller struct {
	client kubernetes.Interface
	o      Options
	log    logrus.FieldLogger
}

func parseWorkload(w string) (kind, name string, err error) {
	kind, name, ok := strings.Cut(w, "/")
	if !ok || name == "" || (kind != "deployment" && kind != "daemonset") {
		return "", "", fmt.Errorf("workload %q: want deployment/<name> or daemonset/<name>", w)
	}
	return kind, name, nil
}

func (u *uninstaller) nodes(ctx context.Context, sel labels.Selector) ([]v1.Node, error) {
	list, err := u.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, fmt.Errorf("listing the release's nodes: %w", err)
	}
	return list.Items, nil
}

// drain cordons each node, so that controllers' replacement pods are not
// scheduled back onto it, deletes its pods and waits until they are gone.
// Mirror pods stand for static pods, which only their files control.
func (u *uninstaller) drain(ctx context.Context, nodes []v1.Node) error {
	pending := map[types.UID]v1.Pod{}
	for _, n := range nodes {
		patch := []byte(`{"spec":{"unschedulable":true}}`)
		if _, err := u.client.CoreV1().Nodes().Patch(ctx, n.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("cordoning node %s: %w", n.Name, err)
		}
		pods, err := u.podsOn(ctx, n.Name)
		if err != nil {
			return err
		}
		for _, p := range pods {
			if isMirror(&p) {
				continue
			}
			if err := u.deletePod(ctx, &p, nil); err != nil {
				return err
			}
			pending[p.UID] = p
		}
		u.log.WithFields(logrus.Fields{"node": n.Name, "pods": len(pods)}).Info("node cordoned; its pods are being stopped")
	}
	return wait.PollUntilContextCancel(ctx, u.o.Poll, true, func(ctx context.Context) (bool, error) {
		return u.podsGone(ctx, nodes, pending)
	})
}

// podsGone drops the pods that no longer exist from pending. Pods on a node
// whose runlet is not Ready are force-deleted: nothing would stop them.
func (u *uninstaller) podsGone(ctx context.Context, nodes []v1.Node, pending map[types.UID]v1.Pod) (bool, error) {
	for _, n := range nodes {
		ready := u.nodeReady(ctx, n.Name)
		pods, err := u.podsOn(ctx, n.Name)
		if err != nil {
			return false, err
		}
		still := map[types.UID]bool{}
		for _, p := range pods {
			if _, ok := pending[p.UID]; !ok {
				continue
			}
			still[p.UID] = true
			if !ready {
				u.log.WithFields(logrus.Fields{"node": n.Name, "pod": p.Namespace + "/" + p.Name}).
					Warn("node not Ready: deleting the pod at once; its containers may keep running")
				zero := int64(0)
				if err := u.deletePod(ctx, &p, &zero); err != nil {
					return false, err
				}
			}
		}
		for uid, p := range pending {
			if p.Spec.NodeName == n.Name && !still[uid] {
				delete(pending, uid)
			}
		}
	}
	return len(pending) == 0, nil
}

func (u *uninstaller) podsOn(ctx context.Context, node string) ([]v1.Pod, error) {
	list, err := u.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("listing the pods of node %s: %w", node, err)
	}
	return list.Items, nil
}

func (u *uninstaller) deletePod(ctx context.Context, p *v1.Pod, grace *int64) error {
	err := u.client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
		GracePeriodSeconds: grace, Preconditions: &metav1.Preconditions{UID: &p.UID},
	})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting pod %s/%s: %w", p.Namespace, p.Name, err)
	}
	return nil
}

func (u *uninstaller) nodeReady(ctx context.Context, name string) bool {
	n, err := u.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// stopWorkload deletes runlet's Deployment or DaemonSet and waits until its
// pods are gone: runlet exits on SIGTERM and leaves its nodes to be deleted.
func (u *uninstaller) stopWorkload(ctx context.Context, kind, name string) error {
	sel, err := u.deleteWorkload(ctx, kind, name)
	if apierrors.IsNotFound(err) {
		u.log.WithField("workload", kind+"/"+name).Info("runlet workload already gone")
		return nil
	}
	if err != nil {
		return fmt.Errorf("stopping runlet (%s/%s): %w", kind, name, err)
	}
	podSel, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return err
	}
	u.log.WithField("workload", kind+"/"+name).Info("runlet workload deleted; waiting for its pods to stop")
	return wait.PollUntilContextCancel(ctx, u.o.Poll, true, func(ctx context.Context) (bool, error) {
		list, err := u.client.CoreV1().Pods(u.o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: podSel.String()})
		if err != nil {
			return false, err
		}
		return len(list.Items) == 0, nil
	})
}

// deleteWorkload deletes the workload and returns its pod selector.
func (u *uninstaller) deleteWorkload(ctx context.Context, kind, name string) (*metav1.LabelSelector, error) {
	apps := u.client.AppsV1()
	if kind == "deployment" {
		d, err := apps.Deployments(u.o.Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, err
		}
		return d.Spec.Selector, apps.Deployments(u.o.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
	}
	ds, err := apps.DaemonSets(u.o.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return ds.Spec.Selector, apps.DaemonSets(u.o.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
}

func isMirror(p *v1.Pod) bool {
	_, ok := p.Annotations[v1.MirrorPodAnnotationKey]
	return ok
}
