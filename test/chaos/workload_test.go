package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// apiTimeout bounds each request of the churn and the checks: the apiserver may be stopped, and a
// request must not hang the soak.
const apiTimeout = 10 * time.Second

// maxDeployments is how many Deployments the churn keeps at most, beside its bare pods.
const maxDeployments = 3

// workload is the churn: in the background, a step every one to four seconds creates or deletes a
// bare pod, or creates, scales, rolls out or deletes a Deployment, or changes the configMap the pods
// read, keeping about target pods on the node. It goes on through faults; the checks pause it.
type workload struct {
	t      *testing.T
	node   string
	ns     string
	api    kubernetes.Interface
	r      *rand.Rand
	target int

	gate   sync.Mutex // held by a step; pause takes it, so no step is under way once paused
	paused bool
	seq    int
	ops    map[string]int
	stop   chan struct{}
	done   chan struct{}
}

func startWorkload(t *testing.T, n *node, r *rand.Rand, target int) *workload {
	cfg := rest.CopyConfig(framework.Get(t).Config)
	cfg.Timeout = apiTimeout
	w := &workload{t: t, node: n.rl.NodeName, ns: framework.Namespace(t), api: kubernetes.NewForConfigOrDie(cfg), r: r,
		target: target, paused: true, ops: map[string]int{}, stop: make(chan struct{}), done: make(chan struct{})}
	ctx := context.Background()
	if _, err := w.api.CoreV1().ConfigMaps(w.ns).Create(ctx, &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: configMapName},
		Data: map[string]string{"greeting": "hello 0\n"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.api.CoreV1().Secrets(w.ns).Create(ctx, &v1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName},
		StringData: map[string]string{"token": "s3cret\n"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	go w.loop()
	t.Cleanup(func() { close(w.stop); <-w.done })
	return w
}

func (w *workload) loop() {
	defer close(w.done)
	for {
		w.gate.Lock()
		d := between(w.r, time.Second, 4*time.Second)
		w.gate.Unlock()
		select {
		case <-w.stop:
			return
		case <-time.After(d):
		}
		w.gate.Lock()
		if !w.paused {
			w.step()
		}
		w.gate.Unlock()
	}
}

// pause waits for the step under way, and stops the churn until resume.
func (w *workload) pause() { w.gate.Lock(); w.paused = true; w.gate.Unlock() }

func (w *workload) resume() { w.gate.Lock(); w.paused = false; w.gate.Unlock() }

// state is what the churn sees of its pods and Deployments.
type state struct {
	bare, finished []v1.Pod // bare pods not being deleted: running ones, and jobs that ended
	deployments    []appsv1.Deployment
	live           int // pods that run or will: bare ones and the Deployments' replicas
}

func (w *workload) state(ctx context.Context) (state, error) {
	var s state
	pods, err := w.api.CoreV1().Pods(w.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return s, err
	}
	deps, err := w.api.AppsV1().Deployments(w.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return s, err
	}
	for _, p := range pods.Items {
		switch {
		case len(p.OwnerReferences) > 0 || p.DeletionTimestamp != nil:
		case p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed:
			s.finished = append(s.finished, p)
		default:
			s.bare = append(s.bare, p)
		}
	}
	s.deployments = deps.Items
	s.live = len(s.bare)
	for _, d := range deps.Items {
		s.live += int(*d.Spec.Replicas)
	}
	return s, nil
}

// step makes one change, drawn by weight from what suits the state: creations below the target,
// deletions above it.
func (w *workload) step() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*apiTimeout)
	defer cancel()
	s, err := w.state(ctx)
	if err != nil {
		w.ops["steps the apiserver did not answer"]++
		return
	}
	below, nDeps := s.live < w.target, len(s.deployments)
	ops := []struct {
		name   string
		weight int
		do     func(context.Context, state) error
	}{
		{"pod created", pick(below, 8, 2), w.createPod},
		{"pod deleted", pick(len(s.bare)+len(s.finished) > 0, pick(below, 2, 8), 0), w.deletePod},
		{"deployment created", pick(nDeps < maxDeployments && below, 2, 0), w.createDeployment},
		{"deployment scaled", pick(nDeps > 0, 2, 0), w.scaleDeployment},
		{"deployment rolled out", pick(nDeps > 0, 2, 0), w.rollDeployment},
		{"deployment deleted", pick(nDeps > 1 && !below, 2, 0), w.deleteDeployment},
		{"configMap changed", 1, w.changeConfigMap},
	}
	total := 0
	for _, op := range ops {
		total += op.weight
	}
	n := w.r.IntN(total)
	for _, op := range ops {
		if n -= op.weight; n < 0 {
			if err := op.do(ctx, s); err != nil {
				w.ops["steps the apiserver did not answer"]++
				return
			}
			w.ops[op.name]++
			return
		}
	}
}

func pick(cond bool, yes, no int) int {
	if cond {
		return yes
	}
	return no
}

func (w *workload) name(kind string) string {
	w.seq++
	return fmt.Sprintf("%s-%d", kind, w.seq)
}

func (w *workload) createPod(ctx context.Context, _ state) error {
	kind := []string{kindWeb, kindWeb, kindWorker, kindWorker, kindWorker, kindStubborn, kindJob, kindJob}[w.r.IntN(8)]
	name := w.name(kind)
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name, kindLabel: kind}},
		Spec: podSpec(w.node, kind, w.r.IntN(2) == 0)}
	_, err := w.api.CoreV1().Pods(w.ns).Create(ctx, p, metav1.CreateOptions{})
	return err
}

// deletePod deletes a bare pod, an ended job first half the time, with the pod's grace period, or
// at once, or with one second.
func (w *workload) deletePod(ctx context.Context, s state) error {
	pods := s.bare
	if len(s.finished) > 0 && (len(pods) == 0 || w.r.IntN(2) == 0) {
		pods = s.finished
	}
	p := pods[w.r.IntN(len(pods))]
	var grace *int64
	if g := w.r.IntN(5); g < 2 {
		grace = &[]int64{0, 1}[g]
	}
	err := w.api.CoreV1().Pods(w.ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: grace})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func (w *workload) createDeployment(ctx context.Context, _ state) error {
	kind := []string{kindWeb, kindWorker}[w.r.IntN(2)]
	name := w.name("deploy-" + kind)
	replicas := int32(1 + w.r.IntN(3))
	labels := map[string]string{"app": name, kindLabel: kind}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: appsv1.DeploymentSpec{
		Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
		Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec(w.node, kind, false)},
	}}
	_, err := w.api.AppsV1().Deployments(w.ns).Create(ctx, d, metav1.CreateOptions{})
	return err
}

func (w *workload) scaleDeployment(ctx context.Context, s state) error {
	d := s.deployments[w.r.IntN(len(s.deployments))]
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, 1+w.r.IntN(3))
	_, err := w.api.AppsV1().Deployments(w.ns).Patch(ctx, d.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// rollDeployment changes the pod template: a new ReplicaSet replaces every pod.
func (w *workload) rollDeployment(ctx context.Context, s state) error {
	d := s.deployments[w.r.IntN(len(s.deployments))]
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"chaos.runlet.io/revision":"%d"}}}}}`, w.r.IntN(1e6))
	_, err := w.api.AppsV1().Deployments(w.ns).Patch(ctx, d.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

func (w *workload) deleteDeployment(ctx context.Context, s state) error {
	d := s.deployments[w.r.IntN(len(s.deployments))]
	bg := metav1.DeletePropagationBackground
	return w.api.AppsV1().Deployments(w.ns).Delete(ctx, d.Name, metav1.DeleteOptions{PropagationPolicy: &bg})
}

func (w *workload) changeConfigMap(ctx context.Context, _ state) error {
	patch := fmt.Sprintf(`{"data":{"greeting":"hello %d\n"}}`, w.r.IntN(1e6))
	_, err := w.api.CoreV1().ConfigMaps(w.ns).Patch(ctx, configMapName, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// fill brings the node to its target at once, one Deployment and bare pods: the start.
func (w *workload) fill() {
	w.gate.Lock()
	defer w.gate.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := w.createDeployment(ctx, state{}); err != nil {
		w.t.Fatal(err)
	}
	s, err := w.state(ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	for i := s.live; i < w.target; i++ {
		if err := w.createPod(ctx, s); err != nil {
			w.t.Fatal(err)
		}
	}
}

// createPods creates n bare pods at once, whatever the state.
func (w *workload) createPods(n int) {
	w.gate.Lock()
	defer w.gate.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for range n {
		if err := w.createPod(ctx, state{}); err != nil {
			w.t.Fatal(err)
		}
		w.ops["pod created"]++
	}
}

// drain deletes every Deployment and pod, each with its grace period, and waits until the API holds
// none.
func (w *workload) drain() {
	w.gate.Lock()
	defer w.gate.Unlock()
	ctx := context.Background()
	fg := metav1.DeletePropagationForeground
	if err := w.api.AppsV1().Deployments(w.ns).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &fg}, metav1.ListOptions{}); err != nil {
		w.t.Fatal(err)
	}
	if err := w.api.CoreV1().Pods(w.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		w.t.Fatal(err)
	}
	framework.Eventually(w.t, 5*time.Minute, "every pod gone from the API", func() (bool, error) {
		pods, err := w.api.CoreV1().Pods(w.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		var left []string
		for _, p := range pods.Items {
			left = append(left, p.Name)
		}
		if len(left) > 0 {
			return false, fmt.Errorf("left: %s", strings.Join(left, ", "))
		}
		return true, nil
	})
}

// summary counts the churn's steps by what they did.
func (w *workload) summary() string {
	w.gate.Lock()
	defer w.gate.Unlock()
	var parts []string
	for op, n := range w.ops {
		parts = append(parts, fmt.Sprintf("%d %s", n, op))
	}
	sort.Strings(parts)
	return "churn: " + strings.Join(parts, ", ")
}
