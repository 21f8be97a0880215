package e2e

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestServicesAndDNS: the local cluster as users meet it, with kube-proxy on the host and CoreDNS on a
// runlet node behind the kube-dns Service. Two runlet nodes with --cluster-dns; a Service in front of
// web pods on both; a client pod on the second node; a webhook the API server calls in a pod.
func TestServicesAndDNS(t *testing.T) {
	t.Parallel()
	dnsArgs := framework.ClusterDNSArgs()
	a := framework.StartRunlet(t, framework.RunletOptions{ExtraArgs: dnsArgs})
	b := framework.StartRunlet(t, framework.RunletOptions{ExtraArgs: dnsArgs})
	framework.StartKubeProxy(t, a.NodeName)
	ns := framework.Namespace(t)
	c := framework.Get(t).Client
	ctx := context.Background()

	for _, w := range []struct{ name, node string }{{"web-a", a.NodeName}, {"web-b", b.NodeName}} {
		p := framework.PodFor(w.node, ns, w.name, webServer("web"))
		p.Labels["tier"] = "web"
		p.Spec.Hostname, p.Spec.Subdomain = w.name, "web-pods"
		framework.CreatePod(t, p)
	}
	framework.CreatePod(t, framework.PodFor(b.NodeName, ns, "client", framework.Sleeper("c")))
	web := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns},
		Spec: v1.ServiceSpec{Selector: map[string]string{"tier": "web"}, Type: v1.ServiceTypeNodePort,
			Ports: []v1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	web, err := c.CoreV1().Services(ns).Create(ctx, web, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	headless := &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web-pods", Namespace: ns},
		Spec: v1.ServiceSpec{Selector: map[string]string{"tier": "web"}, ClusterIP: v1.ClusterIPNone,
			Ports: []v1.ServicePort{{Name: "http", Port: 8080}}},
	}
	if _, err := c.CoreV1().Services(ns).Create(ctx, headless, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	webA := framework.WaitForPodReady(t, ns, "web-a", 2*time.Minute)
	webB := framework.WaitForPodReady(t, ns, "web-b", 2*time.Minute)
	framework.WaitForPodReady(t, ns, "client", 2*time.Minute)
	backends := map[string]bool{"web-a": true, "web-b": true}
	clusterURL := fmt.Sprintf("http://%s/", web.Spec.ClusterIP)

	t.Run("ClusterIPFromAPodOnTheOtherNode", func(t *testing.T) {
		if got := podGet(t, ns, "client", web.Spec.ClusterIP, 80, time.Minute); !backends[got] {
			t.Errorf("%s from the client pod answered %q; want web-a or web-b", clusterURL, got)
		}
	})
	t.Run("ClusterIPFromTheHost", func(t *testing.T) {
		if got := hostGet(t, clusterURL, time.Minute); !backends[got] {
			t.Errorf("%s from the host answered %q", clusterURL, got)
		}
	})
	t.Run("NodePort", func(t *testing.T) {
		url := fmt.Sprintf("http://%s:%d/", framework.Get(t).HostIP(t), web.Spec.Ports[0].NodePort)
		if got := hostGet(t, url, time.Minute); !backends[got] {
			t.Errorf("%s answered %q", url, got)
		}
	})
	t.Run("KubernetesServiceFromAPod", func(t *testing.T) {
		// The apiserver speaks TLS only: a plain request gets its "400 Bad Request", which proves the
		// Service reaches it.
		framework.Eventually(t, time.Minute, "the apiserver through the kubernetes Service", func() (bool, error) {
			out, _ := podHTTP(ns, "client", "10.0.0.1", 443)
			return strings.HasPrefix(out, "HTTP/1.0 400"), nil
		})
	})

	t.Run("WebhookFromAPod", func(t *testing.T) { testWebhookFromAPod(t, b.NodeName, ns) })

	t.Run("DNS", func(t *testing.T) {
		framework.DeployClusterDNS(t, a.NodeName)
		lookup := func(name string) []string {
			t.Helper()
			var ips []string
			framework.Eventually(t, time.Minute, "nslookup "+name+" in the client pod", func() (bool, error) {
				out, err := framework.KubectlE("exec", "-n", ns, "client", "--", "nslookup", name)
				if err != nil {
					return false, nil
				}
				ips = answers(out)
				return len(ips) > 0, nil
			})
			return ips
		}
		svc := "web." + ns + ".svc." + framework.ClusterDomain
		if got := lookup(svc); len(got) != 1 || got[0] != web.Spec.ClusterIP {
			t.Errorf("%s = %v; want the ClusterIP %s", svc, got, web.Spec.ClusterIP)
		}
		for _, p := range []*v1.Pod{webA, webB} {
			name := p.Name + ".web-pods." + ns + ".svc." + framework.ClusterDomain
			if got := lookup(name); len(got) != 1 || got[0] != p.Status.PodIP {
				t.Errorf("%s = %v; want the pod's IP %s", name, got, p.Status.PodIP)
			}
		}
		// What a client does with a Service's name: resolve it, then connect.
		if got := podGet(t, ns, "client", lookup(svc)[0], 80, time.Minute); !backends[got] {
			t.Errorf("http://%s/ answered %q", svc, got)
		}
	})
}

// answers are the addresses in busybox nslookup's output after its "Name:" line (the server's own
// address comes before it).
func answers(out string) []string {
	var ips []string
	seen := false
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "Name:") {
			seen = true
			continue
		}
		if !seen {
			continue
		}
		if v, ok := strings.CutPrefix(line, "Address:"); ok {
			f := strings.Fields(v)
			if len(f) > 0 && net.ParseIP(f[0]) != nil {
				ips = append(ips, f[0])
			}
		}
	}
	return ips
}
