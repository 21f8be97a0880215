package bench

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// hops splits a sequential start into the parts that can be timed from
// outside runlet, each from a clock the next part does not move: the API
// and the scheduler (create → bound, seen by the watch), runlet up to a
// created podman pod (→ its creation time, from podman's inspect), the
// container's create and start, which starts the pod's infra container
// first (→ the infra's start, then the container's), and the way back
// (→ Running seen by the watch: runlet's refresh, status and API write).
type hops struct {
	bound, sandbox, infra, container, back []time.Duration
}

func (h *hops) add(n *node, name string, t0, bound, running time.Time) {
	got, err := n.api.Get(n.ctx, name, metav1.GetOptions{})
	if err != nil || len(got.Status.ContainerStatuses) != 1 {
		n.t.Fatalf("pod %s: %v (statuses %+v)", name, err, got.Status.ContainerStatuses)
	}
	ic, err := n.c.InspectContainer(n.ctx, strings.TrimPrefix(got.Status.ContainerStatuses[0].ContainerID, "podman://"))
	if err != nil {
		n.t.Fatal(err)
	}
	pod, err := n.c.InspectPod(n.ctx, ic.Pod)
	if err != nil {
		n.t.Fatal(err)
	}
	infra, err := n.c.InspectContainer(n.ctx, pod.InfraContainerID)
	if err != nil {
		n.t.Fatal(err)
	}
	h.bound = append(h.bound, bound.Sub(t0))
	h.sandbox = append(h.sandbox, pod.Created.Sub(bound))
	h.infra = append(h.infra, infra.State.StartedAt.Sub(pod.Created))
	h.container = append(h.container, ic.State.StartedAt.Sub(infra.State.StartedAt))
	h.back = append(h.back, running.Sub(ic.State.StartedAt))
}

func (h *hops) report() string {
	row := func(name string, d []time.Duration) string {
		return fmt.Sprintf("  %-62s p50 %7.1f ms   p99 %7.1f ms\n", name, pct(d, .5), pct(d, .99))
	}
	return strings.TrimRight("where a sequential start goes, hop by hop:\n"+
		row("API create → bound to the node (apiserver, scheduler)", h.bound)+
		row("bound → pod created (framework, syncLoop, netns, CNI ADD)", h.sandbox)+
		row("pod created → infra running (container create, start)", h.infra)+
		row("infra running → container running (rest of the start)", h.container)+
		row("container running → Running seen in the API (refresh, status)", h.back), "\n")
}
