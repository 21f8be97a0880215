package kubelet

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/logtest"
	"github.com/runlet/runlet/internal/podtest"
	"github.com/runlet/runlet/internal/polltest"
	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/runtimefake"
	"github.com/sirupsen/logrus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// TestRunNodeRunsAPodFromTheAPI runs a whole node in-process, on the fake
// backend and a fake API: it registers its Node, a pod bound to it in the
// API runs to Running there, and the kubelet API and the metrics port serve.
func TestRunNodeRunsAPodFromTheAPI(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pod := podtest.New("web", podtest.Namespace("ns"), podtest.UID("u1"), podtest.NodeName(nodeName),
		podtest.Containers(v1.Container{Name: "c", Image: "img:1"}))
	client := fake.NewClientset(pod)
	metrics, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg, d := testNode(t, client, metrics)
	done := make(chan error, 1)
	go func() { done <- RunNode(ctx, cfg, d) }()

	polltest.Eventually(t, 10*time.Second, "the Node registered Ready in the API", func() bool {
		n, err := client.CoreV1().Nodes().Get(ctx, nodeName, metav1.GetOptions{})
		return err == nil && nodeReady(n)
	})
	polltest.Eventually(t, 10*time.Second, "the pod Running in the API", func() bool {
		got, err := client.CoreV1().Pods("ns").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && got.Status.Phase == v1.PodRunning
	})
	kubeletAPI := "https://" + net.JoinHostPort(cfg.API.Address, strconv.Itoa(int(cfg.API.Port)))
	expectBody(t, kubeletAPI+"/configz", `"kind":"KubeletConfiguration"`)
	expectBody(t, kubeletAPI+"/pods", `"name":"web"`)
	expectBody(t, "http://"+metrics.Addr().String()+"/healthz/pleg", "ok")

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("RunNode = %v once ctx ended; want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RunNode did not return once ctx ended")
	}
}

func nodeReady(n *v1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == v1.NodeReady {
			return c.Status == v1.ConditionTrue
		}
	}
	return false
}

// testNode is a node on a free kubelet port that lets every request in, on
// the fake backend.
func testNode(t *testing.T, client *fake.Clientset, metrics net.Listener) (NodeConfig, NodeDeps) {
	cfg := NodeConfig{
		Config: testConfig(t),
		API: APIConfig{Address: "127.0.0.1", Port: freePort(t), AuthorizationMode: "AlwaysAllow",
			Configz: &kubeletv1beta1.KubeletConfiguration{}},
		PodSyncWorkers: 2, KubeletVersion: "v1.37.2-runlet-test",
		ContainerLogMaxSize: 1 << 20, ContainerLogMaxFiles: 2,
	}
	d := NodeDeps{Client: client, Events: client.CoreV1(), Heartbeat: client, Backend: runtimefake.New(), Host: runtime.HostInfo{RuntimeName: "fake"},
		Log: logrus.NewEntry(logtest.Discard()), Metrics: metrics}
	return cfg, d
}

// freePort is a port nothing listens on now: the framework binds the
// kubelet port itself.
func freePort(t *testing.T) int32 {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return int32(l.Addr().(*net.TCPAddr).Port)
}

// expectBody fails t unless url answers 200 with a body that contains want.
func expectBody(t *testing.T, url, want string) {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the node's self-signed certificate
	}}
	defer c.CloseIdleConnections()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
		t.Errorf("GET %s = %d %.300s; want 200 with %s", url, resp.StatusCode, body, want)
	}
}
