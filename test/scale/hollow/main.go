// Command hollow is a hollow runlet node for `make scale` (test/scale), as
// kubemark's hollow kubelet is the kubelet's core on a fake CRI: runlet's
// whole node (kubelet.RunNode: the pod config, syncLoop and pod workers,
// PLEG, status manager, virtual-kubelet's node and the kubelet API) on the
// in-memory backend, which starts every container at once and runs nothing.
// It talks to the apiserver as runlet does: under its own node identity,
// with runlet's three clients and their limits. A test binary, not a
// product mode: one process per node, so that each node's memory is its own.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/runlet/runlet/internal/admission"
	"github.com/runlet/runlet/internal/kubeclient"
	"github.com/runlet/runlet/internal/kubelet"
	"github.com/runlet/runlet/internal/logging"
	nodeinfo "github.com/runlet/runlet/internal/node"
	"github.com/runlet/runlet/internal/runtime/runtimefake"
	"github.com/runlet/runlet/internal/sysctl"
	"github.com/sirupsen/logrus"
	vklog "github.com/virtual-kubelet/virtual-kubelet/log"
	vklogrus "github.com/virtual-kubelet/virtual-kubelet/log/logrus"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// UserAgent is what the apiserver's audit log shows for a hollow runlet.
const UserAgent = "runlet-hollow"

// options are the hollow node's flags: runlet's names, runlet's defaults.
type options struct {
	name, kubeconfig, rootDir, address string
	certFile, keyFile, clientCAFile    string
	labels                             string
	port                               int
	maxPods                            int
	logLevel                           string
}

func main() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(50) // runlet's own default (cmd/runlet)
	}
	var o options
	flag.StringVar(&o.name, "nodename", "", "name of the node")
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig with the node's own client certificate (system:node:<name>)")
	flag.StringVar(&o.rootDir, "root-dir", "", "directory for the node's state")
	flag.StringVar(&o.address, "address", "127.0.0.1", "IP address of the kubelet API")
	flag.IntVar(&o.port, "kubelet-port", 0, "port of the kubelet API")
	flag.StringVar(&o.certFile, "tls-cert-file", "", "serving certificate of the kubelet API")
	flag.StringVar(&o.keyFile, "tls-private-key-file", "", "its key")
	flag.StringVar(&o.clientCAFile, "client-ca-file", "", "CA that verifies the kubelet API's client certificates")
	flag.StringVar(&o.labels, "node-labels", "", "labels added to the node's own, comma-separated key=value pairs")
	flag.IntVar(&o.maxPods, "max-pods", 110, "number of pods the node can run")
	flag.StringVar(&o.logLevel, "log-level", "warn", "log level")
	flag.Parse()
	log, err := logging.New(o.logLevel, "text", os.Stderr)
	if err == nil && (o.name == "" || o.kubeconfig == "" || o.rootDir == "" || o.port == 0) {
		err = fmt.Errorf("--nodename, --kubeconfig, --root-dir and --kubelet-port are required")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "hollow:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	vklog.L = vklogrus.FromLogrus(log)
	ctx = vklog.WithLogger(ctx, vklog.L)
	if err := run(ctx, o, log); err != nil {
		log.WithError(err).Error("hollow node stopped")
		os.Exit(1)
	}
}

func run(ctx context.Context, o options, log *logrus.Entry) error {
	d, err := clients(o.kubeconfig)
	if err != nil {
		return err
	}
	backend := runtimefake.New()
	if d.Host, err = backend.Info(ctx); err != nil {
		return err
	}
	d.Backend, d.Log = backend, log
	capacity, err := nodeinfo.Capacity(nodeinfo.Options{MaxPods: o.maxPods, StoragePath: kubelet.StoragePath(o.rootDir)})
	if err != nil {
		return err
	}
	allow, err := sysctl.NewAllowlist(d.Host.KernelVersion, nil)
	if err != nil {
		return err
	}
	d.Admission = admission.New(admission.Config{Allocatable: capacity, Sysctls: allow})
	labels, err := parseLabels(o.labels)
	if err != nil {
		return err
	}
	taints, err := nodeinfo.ParseTaints(nodeinfo.DefaultTaints)
	if err != nil {
		return err
	}
	cfg := kubelet.NodeConfig{
		Config: kubelet.Config{NodeName: o.name, NodeIP: o.address, RootDir: o.rootDir, MaxPods: o.maxPods,
			PLEGRelistPeriod: time.Second, ImagePullTimeout: 10 * time.Minute, Allocatable: capacity},
		API: kubelet.APIConfig{Address: o.address, Port: int32(o.port), TLSCertFile: o.certFile, TLSKeyFile: o.keyFile,
			AuthorizationMode: "Webhook", TokenWebhook: true, ClientCAFile: o.clientCAFile,
			Configz: &kubeletv1beta1.KubeletConfiguration{}},
		PodSyncWorkers: 10, KubeletVersion: "v1.37.2-runlet-hollow", Taints: taints, Labels: labels,
		ContainerLogMaxSize: 10 << 20, ContainerLogMaxFiles: 5,
	}
	return kubelet.RunNode(ctx, cfg, d)
}

// clients are runlet's three clients (cmd/runlet's newClients): the pods'
// work at --kube-api-qps 100 / burst 200, events at 50 / 100, and the
// heartbeat without a limit.
func clients(kubeconfig string) (kubelet.NodeDeps, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return kubelet.NodeDeps{}, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg.UserAgent = UserAgent
	var d kubelet.NodeDeps
	pods := rest.CopyConfig(cfg)
	pods.QPS, pods.Burst = 100, 200
	if d.Client, err = kubeclient.New(pods); err != nil {
		return d, err
	}
	events := rest.CopyConfig(cfg)
	events.QPS, events.Burst = 50, 100
	if d.Events, err = corev1client.NewForConfig(events); err != nil {
		return d, err
	}
	heartbeat := rest.CopyConfig(cfg)
	heartbeat.QPS, heartbeat.Timeout = -1, 10*time.Second
	d.Heartbeat, err = kubeclient.New(heartbeat)
	return d, err
}

func parseLabels(s string) (map[string]string, error) {
	labels := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("--node-labels: %q is not key=value", kv)
		}
		labels[k] = v
	}
	return labels, nodeinfo.ValidateLabels(labels)
}
