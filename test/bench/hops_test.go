package bench

import (
	"fmt"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podmanHops splits a sequential start on runlet on podman into the parts
// that can be timed from outside runlet, each from a clock the next part
// does not move: the API and the scheduler (create → bound, seen by the
// watch), runlet up to a created podman pod (→ its creation time, from
// podman's inspect), the container's create and start, which starts the
// pod's infra container first (→ the infra's start, then the container's),
// and the way back (→ Running seen by the watch: runlet's refresh, status
// and API write).
type podmanHops struct {
	bound, sandbox, infra, container, back []time.Duration
}

func (h *podmanHops) add(n *node, name string, t0, bound, running time.Time) {
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

func hopRow(name string, d []time.Duration) string {
	return fmt.Sprintf("  %-66s p50 %7.1f ms   p99 %7.1f ms\n", name, pct(d, .5), pct(d, .99))
}

func (h *podmanHops) report() string {
	if len(h.bound) == 0 {
		return ""
	}
	return strings.TrimRight("where a sequential start goes on runlet on podman, hop by hop:\n"+
		hopRow("API create → bound to the node (apiserver, scheduler)", h.bound)+
		hopRow("bound → pod created (framework, syncLoop, netns, CNI ADD)", h.sandbox)+
		hopRow("pod created → infra running (container create, start)", h.infra)+
		hopRow("infra running → container running (rest of the start)", h.container)+
		hopRow("container running → Running seen in the API (refresh, status)", h.back), "\n")
}

// kubeletHops splits a sequential start on the kubelet the same way, from
// the times containerd records (CRI): the API and the scheduler, the
// kubelet up to RunPodSandbox (its sandbox's creation time), the sandbox
// (netns, CNI ADD, the pause container) and the container's create, its
// start, and the way back (PLEG, status manager, API write).
type kubeletHops struct {
	bound, sandbox, created, started, back []time.Duration
}

func (h *kubeletHops) add(n *node, p *v1.Pod, t0, bound, running time.Time) {
	st, err := n.kl.startTimes(n.ctx, p.UID)
	if err != nil {
		n.t.Fatal(err)
	}
	h.bound = append(h.bound, bound.Sub(t0))
	h.sandbox = append(h.sandbox, st.sandbox.Sub(bound))
	h.created = append(h.created, st.created.Sub(st.sandbox))
	h.started = append(h.started, st.started.Sub(st.created))
	h.back = append(h.back, running.Sub(st.started))
}

// kubeletMetrics are the kubelet's own histograms of a pod's start.
type kubeletMetrics struct{ sli, sandbox histo }

// kubeletStartMetrics scrapes them from the kubelet node among nodes (nil without one).
func kubeletStartMetrics(nodes []*node) *kubeletMetrics {
	for _, n := range nodes {
		if n.kind != kindKubelet {
			continue
		}
		fams, err := scrapeWith(n.kl.http, n.kl.url)
		if err != nil {
			progress("the kubelet's metrics: %v", err)
			return nil
		}
		return &kubeletMetrics{sli: histograms(fams, "kubelet_pod_start_sli_duration_seconds", "")[""],
			sandbox: histograms(fams, "kubelet_run_podsandbox_duration_seconds", "runtime_handler")[""]}
	}
	return nil
}

func (h *kubeletHops) report(before, after *kubeletMetrics) string {
	if len(h.bound) == 0 {
		return ""
	}
	s := "where a sequential start goes on the kubelet, hop by hop (containerd's times, through CRI):\n" +
		hopRow("API create → bound to the node (apiserver, scheduler)", h.bound) +
		hopRow("bound → sandbox created (pod worker, RunPodSandbox begins)", h.sandbox) +
		hopRow("sandbox created → container created (netns, CNI ADD, pause, create)", h.created) +
		hopRow("container created → container started", h.started) +
		hopRow("container started → Running seen in the API (PLEG, status)", h.back)
	if before != nil && after != nil {
		sli, sb := after.sli.since(before.sli), after.sandbox.since(before.sandbox)
		s += "the kubelet's own metrics over the same starts (histograms: mean, and the bucket p50 and p99 fall in):\n" +
			fmt.Sprintf("  %-66s mean %6.1f ms   p50 ≤ %.0f ms   p99 ≤ %.0f ms   (n=%d)\n", "kubelet_pod_start_sli_duration_seconds",
				sli.meanMS(), sli.quantile(.5), sli.quantile(.99), sli.n) +
			fmt.Sprintf("  %-66s mean %6.1f ms   p50 ≤ %.0f ms   p99 ≤ %.0f ms   (n=%d)\n", "kubelet_run_podsandbox_duration_seconds",
				sb.meanMS(), sb.quantile(.5), sb.quantile(.99), sb.n)
	}
	return strings.TrimRight(s, "\n")
}

// runtimeOps reads the agent's histogram of its runtime calls, by operation.
func (n *node) runtimeOps() histos {
	if n.kind == kindKubelet {
		fams, err := scrapeWith(n.kl.http, n.kl.url)
		if err != nil {
			return nil
		}
		return histograms(fams, "kubelet_runtime_operations_duration_seconds", "operation_type")
	}
	fams, err := scrape(n.rl.MetricsURL())
	if err != nil {
		return nil
	}
	return histograms(fams, "runlet_runtime_operations_duration_seconds", "operation")
}

// agentName says which agent and runtime the node is.
func (n *node) agentName() string {
	switch n.kind {
	case kindPodman:
		return "runlet on podman"
	case kindRunc:
		return "runlet on runc"
	}
	return "the kubelet on containerd"
}
