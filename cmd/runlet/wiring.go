package main

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/runlet/runlet/internal/clientcert"
	"github.com/runlet/runlet/internal/kubeclient"
	"github.com/sirupsen/logrus"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// heartbeatTimeout bounds one write of the node's lease or status, as the
// kubelet bounds it by its status update frequency.
const heartbeatTimeout = 10 * time.Second

// clients are runlet's API clients, split as the kubelet's are: one for the
// pods' work (--kube-api-qps), one for events (--event-qps), and one for the
// node's lease and status that no rate limit holds back, so that a burst of
// pod writes cannot make the node miss its heartbeat.
type clients struct {
	kube      kubernetes.Interface
	events    corev1client.EventsGetter
	heartbeat kubernetes.Interface
}

func newClients(ctx context.Context, o *options, log *logrus.Entry) (clients, error) {
	cfg, err := nodeConfig(ctx, o, log)
	if err != nil {
		return clients{}, err
	}
	var c clients
	if c.kube, err = podsClient(cfg, o); err != nil {
		return clients{}, err
	}
	events := rest.CopyConfig(cfg)
	events.QPS, events.Burst = float32(o.EventQPS), int(o.EventBurst)
	if o.EventQPS == 0 {
		events.QPS = -1 // no limit, as the kubelet reads 0
	}
	if c.events, err = corev1client.NewForConfig(events); err != nil {
		return clients{}, fmt.Errorf("API client for events: %w", err)
	}
	heartbeat := rest.CopyConfig(cfg)
	heartbeat.QPS, heartbeat.Timeout = -1, heartbeatTimeout
	if c.heartbeat, err = kubeclient.New(heartbeat); err != nil {
		return clients{}, fmt.Errorf("API client for the node's heartbeat: %w", err)
	}
	return c, nil
}

// newClient builds runlet's client for the pods' work: client-go's defaults
// (QPS 5, burst 10) would throttle status updates long before the backend
// is the limit.
func newClient(o *options) (kubernetes.Interface, error) {
	cfg, err := restConfig(o)
	if err != nil {
		return nil, err
	}
	return podsClient(cfg, o)
}

func podsClient(cfg *rest.Config, o *options) (kubernetes.Interface, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = o.KubeAPIQPS, o.KubeAPIBurst
	return kubeclient.New(cfg)
}

// nodeConfig is the REST config of the node's clients: with a bootstrap
// kubeconfig, the node's own certificate (TLS bootstrap, then rotation);
// else --kubeconfig or the pod's ServiceAccount, as given.
func nodeConfig(ctx context.Context, o *options, log *logrus.Entry) (*rest.Config, error) {
	if o.BootstrapKubeconfig == "" {
		return restConfig(o)
	}
	cfg, id, err := clientcert.Bootstrap(ctx, clientcert.Options{Kubeconfig: o.Kubeconfig, BootstrapKubeconfig: o.BootstrapKubeconfig,
		CertDir: o.CertDir, NodeName: o.NodeName, Rotate: o.RotateCertificates, Log: log})
	if err != nil {
		return nil, err
	}
	context.AfterFunc(ctx, id.Stop)
	if o.ClientCAFile == "" {
		// The kubelet API verifies the apiserver's client certificate against
		// the cluster's CA, as kubeadm points a kubelet's clientCAFile at it:
		// a node may not read the apiserver's own client CA ConfigMap.
		if o.ClientCAFile, err = id.WriteClusterCA(o.CertDir); err != nil {
			return nil, err
		}
		log.WithField("clientCA", o.ClientCAFile).Info("client CA of the kubelet API: the cluster's CA, from the node's kubeconfig")
	}
	cfg.UserAgent = "runlet/" + version
	return cfg, nil
}

func restConfig(o *options) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if o.Kubeconfig == "" {
		cfg, err = rest.InClusterConfig()
	} else {
		cfg, err = clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	}
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	cfg.UserAgent = "runlet/" + version
	return cfg, nil
}

// resolveNodeIP returns the flag's IP or the host's first non-loopback address.
func resolveNodeIP(flag string) (string, error) {
	if flag != "" {
		if net.ParseIP(flag) == nil {
			return "", fmt.Errorf("--node-ip %q is not an IP address", flag)
		}
		return flag, nil
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", err
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && !ipn.IP.IsLoopback() && ipn.IP.To4() != nil && !ipn.IP.IsLinkLocalUnicast() {
			return ipn.IP.String(), nil
		}
	}
	return "127.0.0.1", nil
}
