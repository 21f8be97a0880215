package bench

import (
	"fmt"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The probes each pod of benchProbes gets, every second.
const (
	probeHTTP = "httpGet" // busybox httpd answers it; the agent sends it
	probeExec = "exec"    // `true` in the container, through the runtime
)

// benchProbes runs cfg.bursts[0] pods on each node in turn, each with a
// readiness probe of the kind every second, and measures the CPU of the
// node's agent, of its stack and of the host while they are probed. On
// runlet on podman it also counts the goroutines the httpGet probes add.
func benchProbes(nodes []*node, r *results, kind string) {
	cfg := nodes[0].cfg
	count := cfg.bursts[0]
	inTurns(nodes, 1, func(n *node, _ int) {
		r.notes = append(r.notes, waitQuiet(fmt.Sprintf("%s: %d pods probed (%s)", n.agentName(), count, kind), cfg.quiet))
		progress("%s: %d pods with an %s readiness probe every second", n.agentName(), count, kind)
		g0 := nan()
		if n.kind == kindPodman {
			g0 = metricValue(n.rl.MetricsURL(), "go_goroutines")
		}
		_, pods := n.createMany("probed", count, func(name string) *v1.Pod { return n.pod(name, probed(kind)) })
		n.waitAll("ready", pods, 5*time.Minute)
		progress("%s: %d probed pods ready: settling %v, then CPU over %v", n.agentName(), count, cfg.settle, cfg.cpuWindow)
		n.sleepSettle()
		cpu := n.measureStackCPU()
		if kind == probeHTTP {
			r.stacks[n.kind].probeHTTP = cpu
			if n.kind == kindPodman {
				r.probeGoroutines = metricValue(n.rl.MetricsURL(), "go_goroutines") - g0
			}
		} else {
			r.stacks[n.kind].exec = cpu
		}
		progress("%s: %s probes: CPU agent %.2f %%, stack %.2f %%, host %.2f %% of a core; deleting the pods",
			n.agentName(), kind, cpu.agent, cpu.stack, cpu.host)
		n.gone(pods)
	})
}

// probed is a busybox httpd whose readiness is probed every second.
func probed(kind string) v1.Container {
	c := framework.Busybox("web", "sh", "-c", "echo ok >/var/www/index.html; exec httpd -f -p 8080 -h /var/www")
	h := v1.ProbeHandler{HTTPGet: &v1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(8080)}}
	if kind == probeExec {
		h = v1.ProbeHandler{Exec: &v1.ExecAction{Command: []string{"true"}}}
	}
	c.ReadinessProbe = &v1.Probe{PeriodSeconds: 1, ProbeHandler: h}
	return c
}
