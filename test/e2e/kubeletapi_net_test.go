package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runlet/runlet/test/e2e/framework"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// httpdScript serves a small page and a 1 MiB file on port 80.
const httpdScript = `mkdir -p /www && echo hello-from-pod > /www/index.html &&
dd if=/dev/urandom of=/www/big bs=1024 count=1024 2>/dev/null && exec httpd -f -p 80 -h /www`

// testPortForward forwards to busybox httpd: concurrent connections, a
// large body, and a connection after 35 s idle (virtual-kubelet's swapped
// timeouts would have closed the forward after 30 s).
func testPortForward(t *testing.T, node, ns string) {
	runPod(t, framework.PodFor(node, ns, "web", framework.Busybox("c", "sh", "-c", httpdScript)))
	base := portForward(t, ns, "web", 80)
	get := func(path string) (string, error) {
		cl := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := cl.Get(base + path)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	framework.Eventually(t, 30*time.Second, "httpd answers through the forward", func() (bool, error) {
		body, err := get("/")
		return body == "hello-from-pod\n", err
	})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if body, err := get("/big"); err != nil || len(body) != 1<<20 {
				t.Errorf("concurrent GET /big: %d bytes, %v", len(body), err)
			}
		}()
	}
	wg.Wait()
	time.Sleep(35 * time.Second)
	if body, err := get("/"); err != nil || body != "hello-from-pod\n" {
		t.Errorf("after 35 s idle: %q, %v; want the forward still up", body, err)
	}
}

// portForward runs `kubectl port-forward` on a free 127.0.0.1 port until the
// test ends and returns the local base URL.
func portForward(t *testing.T, ns, pod string, port int) string {
	c := framework.Get(t)
	local := framework.FreePort(t)
	cmd := exec.Command(c.Kubectl, "port-forward", "-n", ns, "pod/"+pod, fmt.Sprintf("%d:%d", local, port), "--address", "127.0.0.1")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.AdminKubeconfig)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan bool, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			if strings.HasPrefix(s.Text(), "Forwarding from") {
				ready <- true
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatalf("kubectl port-forward ended: %s", stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("kubectl port-forward not ready after 30 s: %s", stderr.String())
	}
	return fmt.Sprintf("http://127.0.0.1:%d", local)
}

// testStatsAndMetrics reads /stats/summary and /metrics/resource as the
// apiserver's node proxy would, with its kubelet-client certificate. The
// proxy itself (kubectl get --raw /api/v1/nodes/<node>/proxy/...) refuses
// nodes whose address is not global unicast ("address not allowed"), and the
// test nodes must live on 127.0.0.1.
func testStatsAndMetrics(t *testing.T, rl *framework.Runlet, ns string) {
	runPod(t, framework.PodFor(rl.NodeName, ns, "busy", framework.Busybox("c", "sh", "-c",
		"i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; exec sleep 3600")))
	c := framework.Get(t)
	cert := loadPair(t, filepath.Join(c.PKIDir, "apiserver-kubelet-client.crt"), filepath.Join(c.PKIDir, "apiserver-kubelet-client.key"))
	var pod *statsv1alpha1.PodStats
	var sum statsv1alpha1.Summary
	framework.Eventually(t, 60*time.Second, "the pod in /stats/summary", func() (bool, error) {
		code, raw, err := kubeletGet(t, rl, "/stats/summary", "", &cert)
		if err != nil || code != 200 {
			return false, fmt.Errorf("GET /stats/summary: %d %.300s %v", code, raw, err)
		}
		sum = statsv1alpha1.Summary{}
		if err := json.Unmarshal([]byte(raw), &sum); err != nil {
			return false, err
		}
		pod = findPodStats(sum, ns, "busy")
		return pod != nil && len(pod.Containers) == 1 && pod.CPU != nil, nil
	})
	checkNodeStats(t, sum.Node, rl.NodeName)
	b, _ := json.Marshal(pod)
	t.Logf("pod stats: %s", b)
	ctr := pod.Containers[0]
	if ctr.Name != "c" || ctr.CPU == nil || deref(ctr.CPU.UsageCoreNanoSeconds) == 0 || ctr.Memory == nil || deref(ctr.Memory.WorkingSetBytes) == 0 {
		t.Errorf("container stats %+v", ctr)
	}
	if pod.Memory == nil || pod.Network == nil || pod.PodRef.UID == "" {
		t.Errorf("pod stats %+v", pod)
	}
	code, metrics, err := kubeletGet(t, rl, "/metrics/resource", "", &cert)
	if err != nil || code != 200 {
		t.Fatalf("GET /metrics/resource: %d %v", code, err)
	}
	checkResourceMetrics(t, metrics, ns)
}

func checkResourceMetrics(t *testing.T, metrics, ns string) {
	t.Helper()
	for _, want := range []string{
		"\nnode_cpu_usage_seconds_total ", "\nnode_memory_working_set_bytes ",
		fmt.Sprintf("\ncontainer_cpu_usage_seconds_total{container=\"c\",namespace=%q,pod=\"busy\"} ", ns),
		fmt.Sprintf("\ncontainer_memory_working_set_bytes{container=\"c\",namespace=%q,pod=\"busy\"} ", ns),
		fmt.Sprintf("\ncontainer_start_time_seconds{container=\"c\",namespace=%q,pod=\"busy\"} ", ns),
		fmt.Sprintf("\npod_cpu_usage_seconds_total{namespace=%q,pod=\"busy\"} ", ns),
		fmt.Sprintf("\npod_memory_working_set_bytes{namespace=%q,pod=\"busy\"} ", ns),
		"\nscrape_error 0\n", "# TYPE node_cpu_usage_seconds_total counter\n",
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics/resource lacks %q:\n%s", strings.TrimSpace(want), metrics)
		}
	}
}

func checkNodeStats(t *testing.T, n statsv1alpha1.NodeStats, node string) {
	t.Helper()
	if n.NodeName != node || n.CPU == nil || deref(n.CPU.UsageCoreNanoSeconds) == 0 || n.Memory == nil ||
		deref(n.Memory.WorkingSetBytes) == 0 || n.Fs == nil || deref(n.Fs.CapacityBytes) == 0 || n.Network == nil {
		b, _ := json.Marshal(n)
		t.Errorf("node stats incomplete: %s", b)
	}
	if len(n.SystemContainers) == 0 || n.SystemContainers[0].Name != "pods" {
		t.Errorf("system containers %+v; want pods", n.SystemContainers)
	}
}

func findPodStats(s statsv1alpha1.Summary, ns, name string) *statsv1alpha1.PodStats {
	for i := range s.Pods {
		if s.Pods[i].PodRef.Namespace == ns && s.Pods[i].PodRef.Name == name {
			return &s.Pods[i]
		}
	}
	return nil
}

func deref(p *uint64) uint64 {
	if p == nil {
		return 0
	}
	return *p
}
