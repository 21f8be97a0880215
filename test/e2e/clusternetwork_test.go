package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// webServer is a busybox httpd on port 8080 whose page is the pod's host name.
func webServer(name string) v1.Container {
	c := framework.Busybox(name, "sh", "-c", "hostname > /var/www/index.html; exec httpd -f -p 8080 -h /var/www")
	c.Ports = []v1.ContainerPort{{Name: "http", ContainerPort: 8080}}
	c.ReadinessProbe = &v1.Probe{ProbeHandler: v1.ProbeHandler{TCPSocket: &v1.TCPSocketAction{Port: intstr.FromInt32(8080)}}, PeriodSeconds: 1}
	return c
}

// hostPortPod runs the web server pod "hostport" on node with its port mapped to a free hostPort on
// 127.0.0.1, checks that the host reaches it there, and returns that URL.
func hostPortPod(t *testing.T, node, ns string) string {
	t.Helper()
	port := framework.FreePort(t)
	c := webServer("web")
	c.Ports[0].HostPort = int32(port)
	framework.CreatePod(t, framework.PodFor(node, ns, "hostport", c))
	framework.WaitForPodReady(t, ns, "hostport", 2*time.Minute)
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	if got := hostGet(t, url, 30*time.Second); got != "hostport" {
		t.Errorf("%s answered %q; want hostport", url, got)
	}
	return url
}

// hostGet fetches url from the host, retrying until timeout.
func hostGet(t *testing.T, url string, timeout time.Duration) string {
	t.Helper()
	var body string
	framework.Eventually(t, timeout, "GET "+url+" from the host", func() (bool, error) {
		c := http.Client{Timeout: 3 * time.Second}
		resp, err := c.Get(url)
		if err != nil {
			return false, nil
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		body = strings.TrimSpace(string(b))
		return err == nil && resp.StatusCode == http.StatusOK, nil
	})
	return body
}

// podGet sends GET / to host:port from inside a pod's container and returns the response body,
// retrying until timeout. busybox's nc makes the request: the image's static wget cannot resolve.
func podGet(t *testing.T, ns, pod, host string, port int, timeout time.Duration) string {
	t.Helper()
	var body string
	what := fmt.Sprintf("GET http://%s:%d/ from pod %s", host, port, pod)
	framework.Eventually(t, timeout, what, func() (bool, error) {
		out, err := podHTTP(ns, pod, host, port)
		if err != nil || !strings.HasPrefix(out, "HTTP/1.") {
			return false, nil
		}
		_, b, _ := strings.Cut(out, "\r\n\r\n")
		body = strings.TrimSpace(b)
		return strings.Contains(out[:strings.Index(out, "\r\n")], " 200 "), nil
	})
	return body
}

// podHTTP is one plain HTTP/1.0 GET / with busybox nc in the pod's first container.
func podHTTP(ns, pod, host string, port int) (string, error) {
	req := fmt.Sprintf(`printf 'GET / HTTP/1.0\r\nHost: %s\r\n\r\n' | nc -w 3 %s %d`, host, host, port)
	return framework.KubectlE("exec", "-n", ns, pod, "--", "sh", "-c", req)
}

func nodePodCIDR(t *testing.T, node string) *net.IPNet {
	t.Helper()
	n, err := framework.Get(t).Client.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := framework.PodCIDR(n)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestClusterNetwork: two runlet nodes on one host, as a cluster whose pod network routes each
// node's podCIDR. Pods get addresses from their node's podCIDR, which the controller-manager
// allocated, never the same twice; they reach pods of the other node by pod IP, and so does the
// host. A restart of runlet keeps each pod's address, and a deleted pod's address is released.
func TestClusterNetwork(t *testing.T) {
	t.Parallel()
	a := framework.StartRunlet(t, framework.RunletOptions{})
	b := framework.StartRunlet(t, framework.RunletOptions{})
	ns := framework.Namespace(t)
	cidrA, cidrB := nodePodCIDR(t, a.NodeName), nodePodCIDR(t, b.NodeName)
	_, cluster, _ := net.ParseCIDR(framework.Get(t).ClusterCIDR(t))
	if cidrA.String() == cidrB.String() || !cluster.Contains(cidrA.IP) || !cluster.Contains(cidrB.IP) {
		t.Fatalf("pod CIDRs %s and %s: want two different ranges of %s", cidrA, cidrB, cluster)
	}

	framework.CreatePod(t, framework.PodFor(a.NodeName, ns, "web-a", webServer("web")))
	framework.CreatePod(t, framework.PodFor(b.NodeName, ns, "web-b", webServer("web")))
	framework.CreatePod(t, framework.PodFor(b.NodeName, ns, "client-b", framework.Sleeper("c")))
	webA := framework.WaitForPodReady(t, ns, "web-a", 2*time.Minute)
	webB := framework.WaitForPodReady(t, ns, "web-b", 2*time.Minute)
	client := framework.WaitForPodReady(t, ns, "client-b", 2*time.Minute)
	for _, tc := range []struct {
		pod  *v1.Pod
		cidr *net.IPNet
	}{{webA, cidrA}, {webB, cidrB}, {client, cidrB}} {
		if ip := net.ParseIP(tc.pod.Status.PodIP); ip == nil || !tc.cidr.Contains(ip) {
			t.Errorf("pod %s has IP %q; want one of its node's podCIDR %s", tc.pod.Name, tc.pod.Status.PodIP, tc.cidr)
		}
	}
	if ips := []string{webA.Status.PodIP, webB.Status.PodIP, client.Status.PodIP}; len(slices.Compact(slices.Sorted(slices.Values(ips)))) != 3 {
		t.Fatalf("pod IPs %v repeat", ips)
	}
	ipA, ipB := webA.Status.PodIP, webB.Status.PodIP
	urlA, urlB := fmt.Sprintf("http://%s:8080/", ipA), fmt.Sprintf("http://%s:8080/", ipB)
	t.Run("HostReachesBothNodes", func(t *testing.T) {
		if got := hostGet(t, urlA, 30*time.Second); got != "web-a" {
			t.Errorf("%s answered %q; want web-a", urlA, got)
		}
		if got := hostGet(t, urlB, 30*time.Second); got != "web-b" {
			t.Errorf("%s answered %q; want web-b", urlB, got)
		}
	})
	t.Run("PodReachesTheOtherNode", func(t *testing.T) {
		if got := podGet(t, ns, "client-b", ipA, 8080, 30*time.Second); got != "web-a" {
			t.Errorf("from client-b, %s answered %q; want web-a", urlA, got)
		}
		if got := podGet(t, ns, "client-b", ipB, 8080, 30*time.Second); got != "web-b" {
			t.Errorf("from client-b, %s answered %q; want web-b", urlB, got)
		}
	})
	t.Run("HostPort", func(t *testing.T) { hostPortPod(t, b.NodeName, ns) })
	t.Run("RestartKeepsTheAddress", func(t *testing.T) {
		a.Restart()
		framework.Eventually(t, 30*time.Second, "web-a Ready after the restart", func() (bool, error) {
			p, err := framework.Get(t).Client.CoreV1().Pods(ns).Get(context.Background(), "web-a", metav1.GetOptions{})
			return err == nil && framework.PodReady(p), err
		})
		p, err := framework.Get(t).Client.CoreV1().Pods(ns).Get(context.Background(), "web-a", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Status.PodIP != webA.Status.PodIP || p.Status.ContainerStatuses[0].RestartCount != 0 {
			t.Errorf("after runlet's restart: IP %s, restarts %d; want %s, 0", p.Status.PodIP, p.Status.ContainerStatuses[0].RestartCount, webA.Status.PodIP)
		}
		if got := hostGet(t, urlA, 30*time.Second); got != "web-a" {
			t.Errorf("%s answered %q after the restart", urlA, got)
		}
	})
	t.Run("DeleteReleasesTheAddress", func(t *testing.T) {
		if !slices.Contains(framework.KubenetLeases(a.RootDir, a.NodeName), webA.Status.PodIP) {
			t.Fatalf("no lease for %s in %v", webA.Status.PodIP, framework.KubenetLeases(a.RootDir, a.NodeName))
		}
		framework.DeletePod(t, ns, "web-a", nil)
		framework.WaitForPodGone(t, ns, "web-a", time.Minute)
		framework.Eventually(t, 30*time.Second, "web-a's lease and namespace released", func() (bool, error) {
			return len(framework.KubenetLeases(a.RootDir, a.NodeName)) == 0 && len(framework.NetworkAttachments(a.RootDir)) == 0, nil
		})
	})
}
