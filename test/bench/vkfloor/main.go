// Command vkfloor is the bench's yardstick for runlet's memory at rest: a
// virtual-kubelet node whose provider does nothing, built on the same
// framework and libraries runlet must use (virtual-kubelet's node and pod
// controllers and kubelet API handlers, client-go, logrus, Prometheus,
// OpenTelemetry with the OTLP exporter). It registers its node, keeps the
// lease and serves the kubelet port and /metrics, and runs no pod.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/sirupsen/logrus"
	"github.com/virtual-kubelet/virtual-kubelet/node"
	"github.com/virtual-kubelet/virtual-kubelet/node/api"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/runlet/runlet/internal/kubeclient"
	"github.com/runlet/runlet/internal/kubeletserver"
	"github.com/runlet/runlet/internal/telemetry"
	"github.com/runlet/runlet/internal/vknode"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file")
	name := flag.String("nodename", "vkfloor", "node name")
	listen := flag.String("listen", "127.0.0.1:0", "kubelet port address")
	metrics := flag.String("metrics-addr", "127.0.0.1:0", "metrics address")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kubeconfig, *name, *listen, *metrics); err != nil {
		fmt.Fprintln(os.Stderr, "vkfloor:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, kubeconfig, name, listen, metrics string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubeclient.New(cfg)
	if err != nil {
		return err
	}
	shutdown, err := telemetry.SetupTracing(ctx, name, "vkfloor")
	if err != nil {
		return err
	}
	defer func() { _ = shutdown(context.Background()) }()
	cert, err := kubeletserver.SelfSigned(name, "127.0.0.1")
	if err != nil {
		return err
	}
	recorder, stopEvents := vknode.NewEventRecorder(client.CoreV1(), "vkfloor", name)
	defer stopEvents()
	mux := http.NewServeMux()
	api.AttachPodRoutes(api.PodHandlerConfig{}, mux, true)
	go func() { _ = http.ListenAndServe(metrics, promhttp.Handler()) }() //nolint:gosec // a bench helper on loopback
	logrus.WithField("node", name).Info("vkfloor: a node with a provider that does nothing")
	spec := vknode.BaseNode(name)
	spec.Status.Capacity = v1.ResourceList{v1.ResourcePods: resource.MustParse("110")}
	spec.Status.Allocatable = spec.Status.Capacity
	spec.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "KubeletReady"}}
	n, err := vknode.New(vknode.Config{
		Name: name, Client: client, Workers: 10, ListenAddr: listen, Handler: mux,
		EventRecorder: recorder, Pods: vknode.NewPodInformer(client, name),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		Node:      spec, Provider: nothing{}, NodeProvider: node.NewNaiveNodeProvider(),
	})
	if err != nil {
		return err
	}
	return n.Run(ctx)
}

// nothing is a provider that runs no pod.
type nothing struct{}

func (nothing) CreatePod(context.Context, *v1.Pod) error                { return nil }
func (nothing) UpdatePod(context.Context, *v1.Pod) error                { return nil }
func (nothing) DeletePod(context.Context, *v1.Pod) error                { return nil }
func (nothing) GetPod(context.Context, string, string) (*v1.Pod, error) { return nil, nil }
func (nothing) GetPodStatus(context.Context, string, string) (*v1.PodStatus, error) {
	return nil, nil
}
func (nothing) GetPods(context.Context) ([]*v1.Pod, error) { return nil, nil }
