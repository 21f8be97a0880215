package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/sirupsen/logrus"

	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/util/flowcontrol"
)

// TestClientsSplitAsTheKubelets: events have their own limit (--event-qps,
// --event-burst), and the node's heartbeat none, so that neither waits
// behind a burst of pod writes.
func TestClientsSplitAsTheKubelets(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
contexts: [{name: c, context: {cluster: c}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := parseFlags([]string{"--kubeconfig", kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	c, err := newClients(context.Background(), o, logrus.NewEntry(logrus.New()))
	if err != nil {
		t.Fatal(err)
	}
	limiter := func(l flowcontrol.RateLimiter) float32 {
		if l == nil {
			return 0
		}
		return l.QPS()
	}
	kube := limiter(c.kube.CoreV1().RESTClient().GetRateLimiter())
	events := limiter(c.events.(*corev1client.CoreV1Client).RESTClient().GetRateLimiter())
	heartbeat := c.heartbeat.CoordinationV1().RESTClient().GetRateLimiter()
	if kube != 100 || events != 50 || heartbeat != nil {
		t.Errorf("limits: pods %v QPS, events %v QPS, heartbeat %v; want 100, 50 and none", kube, events, heartbeat)
	}
}
