package main

import (
	"fmt"
	"net"
	"os"
	"time"

	"github.com/runlet/runlet/internal/kubeclient"
	nodeinfo "github.com/runlet/runlet/internal/node"
	"github.com/runlet/runlet/internal/pleg"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// newClient builds runlet's own client: client-go's defaults (QPS 5, burst
// 10) would throttle status updates long before podman is the limit.
func newClient(o *options) (kubernetes.Interface, error) {
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
	cfg.QPS, cfg.Burst = o.KubeAPIQPS, o.KubeAPIBurst
	cfg.UserAgent = "runlet/" + version
	return kubeclient.New(cfg)
}

func plegHealth(p *pleg.PLEG) nodeinfo.HealthCheck {
	return func() error {
		if ok, since := p.Healthy(); !ok {
			return fmt.Errorf("PLEG is not healthy: pleg was last seen active %s ago", since.Round(time.Second))
		}
		return nil
	}
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

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
