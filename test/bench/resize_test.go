package bench

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/runlet/runlet/test/e2e/framework"
)

// benchResize resizes one running pod's memory limit in place, back and
// forth, cfg.n times: the resize call → the status, seen by the watch,
// that observed the new generation and shows the new limit, with no resize
// condition left (runlet writes it once podman applied the limit).
func benchResize(n *node, r *results) {
	progress("runlet: %d in-place resizes (resize call → the new limit in the status)", n.cfg.n)
	p := framework.PodFor(n.rl.NodeName, n.ns, "resize", framework.Sleeper("c"))
	p.Spec.Containers[0].Resources = v1.ResourceRequirements{
		Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("100m"), v1.ResourceMemory: resource.MustParse("32Mi")},
		Limits:   v1.ResourceList{v1.ResourceCPU: resource.MustParse("200m"), v1.ResourceMemory: resource.MustParse("64Mi")},
	}
	if _, err := n.api.Create(n.ctx, p, metav1.CreateOptions{}); err != nil {
		n.t.Fatalf("create pod %s: %v", p.Name, err)
	}
	n.wait("running", p.Name, 2*time.Minute)
	for i := range n.cfg.n {
		cur, err := n.api.Get(n.ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			n.t.Fatal(err)
		}
		cur.Spec.Containers[0].Resources.Limits[v1.ResourceMemory] = resource.MustParse([]string{"96Mi", "64Mi"}[i%2])
		t0 := time.Now()
		updated, err := n.api.UpdateResize(n.ctx, p.Name, cur, metav1.UpdateOptions{})
		if err != nil {
			n.t.Fatalf("resize pod %s: %v", p.Name, err)
		}
		r.resize = append(r.resize, n.wait(fmt.Sprintf("resized-%d", updated.Generation), p.Name, time.Minute).Sub(t0))
	}
	deletePod(n.t, n.ctx, n.api, p.Name)
	n.wait("gone", p.Name, time.Minute)
}

// resized reports a status that shows the spec's memory limit in force,
// with no resize pending or in progress.
func resized(p *v1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == v1.PodResizePending || c.Type == v1.PodResizeInProgress {
			return false
		}
	}
	if len(p.Status.ContainerStatuses) != 1 || len(p.Spec.Containers) != 1 || p.Status.ContainerStatuses[0].Resources == nil {
		return false
	}
	want, got := p.Spec.Containers[0].Resources.Limits.Memory(), p.Status.ContainerStatuses[0].Resources.Limits.Memory()
	return !want.IsZero() && want.Cmp(*got) == 0
}
