package bench

import (
	"fmt"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// benchProbes runs cfg.bursts[0] pods, each with an httpGet readiness probe every
// second (busybox httpd answering it), and measures runlet's CPU and
// goroutines while they are probed. runlet sends the probes itself: the
// podman service's CPU shows they cost it nothing.
func benchProbes(n *node, r *results) {
	t, ctx, cfg, rl, ns := n.t, n.ctx, n.cfg, n.rl, n.ns
	api := n.api
	count := cfg.bursts[0]
	progress("runlet: %d pods with an httpGet readiness probe every second", count)
	g0 := metricValue(rl.MetricsURL(), "go_goroutines")
	pods := make([]*v1.Pod, count)
	err := parallel(20, count, func(i int) (err error) {
		c := framework.Busybox("web", "sh", "-c", "echo ok >/var/www/index.html; exec httpd -f -p 8080 -h /var/www")
		c.ReadinessProbe = &v1.Probe{PeriodSeconds: 1, ProbeHandler: v1.ProbeHandler{
			HTTPGet: &v1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(8080)}}}
		p := framework.PodFor(rl.NodeName, ns, fmt.Sprintf("probed-%d", i), c)
		pods[i], err = api.Create(ctx, p, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods {
		if _, ok := n.w.wait("ready/"+p.Name, 5*time.Minute); !ok {
			t.Fatalf("pod %s not ready\n%s", p.Name, framework.DescribePod(ns, p.Name))
		}
	}
	progress("runlet: %d probed pods ready: settling %v, then CPU over %v", count, cfg.settle, cfg.cpuWindow)
	time.Sleep(cfg.settle)
	r.probeCPU, r.probeSvcCPU = cpuOver(t, cfg.cpuWindow, rl.PID(), n.be.ServicePID())
	r.probeGoroutines = metricValue(rl.MetricsURL(), "go_goroutines") - g0

	progress("runlet: probes: %.2f %% of a core (podman service %.2f %%), +%.0f goroutines; deleting the pods",
		r.probeCPU, r.probeSvcCPU, r.probeGoroutines)
	n.gone(pods)
}
