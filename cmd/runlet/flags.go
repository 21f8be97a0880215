package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	v1 "k8s.io/api/core/v1"
	cliflag "k8s.io/component-base/cli/flag"
)

// options are runlet's flags; names follow the kubelet's and virtual-kubelet's.
type options struct {
	Kubeconfig        string
	NodeName          string
	KubeletPort       int32
	Address           string
	NodeIP            string
	PodmanSocket      string
	LogLevel          string
	TLSCertFile       string
	TLSKeyFile        string
	ClientCAFile      string
	MaxPods           int
	RootDir           string
	MetricsAddr       string
	PodManifestPath   string
	ManifestURL       string
	ManifestURLHeader []string
	PLEGRelistPeriod  time.Duration
	AuthWebhook       bool
	AuthorizationMode string
	KubeAPIQPS        float32
	KubeAPIBurst      int
	PodSyncWorkers    int
	ShowVersion       bool
	// NodeLabels and RegisterWithTaints are added to runlet's own labels
	// and taint (the kubelet's --node-labels, --register-with-taints).
	NodeLabels         map[string]string
	RegisterWithTaints []string
	taints             []v1.Taint // RegisterWithTaints, parsed
	// PodmanIdentity and PodmanKnownHosts authenticate an ssh:// --podman-socket.
	PodmanIdentity   string
	PodmanKnownHosts string

	// BootstrapServingCert is the kubelet's --rotate-server-certificates.
	BootstrapServingCert bool
}

func parseFlags(args []string) (*options, error) {
	host, _ := os.Hostname()
	o := &options{NodeLabels: map[string]string{}}
	fs := pflag.NewFlagSet("runlet", pflag.ContinueOnError)
	fs.StringVar(&o.Kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file; empty means in-cluster config")
	fs.StringVar(&o.NodeName, "nodename", defaultNodeName(host), "name of the node to register; never the host's own node name")
	fs.Int32Var(&o.KubeletPort, "kubelet-port", defaultKubeletPort, "port of the kubelet API (logs, exec, stats); not the kubelet's 10250, so both fit on one host")
	fs.StringVar(&o.Address, "address", "0.0.0.0", "IP address the kubelet API listens on")
	fs.StringVar(&o.NodeIP, "node-ip", "", "IP address of the node (InternalIP); default: the first non-loopback address")
	fs.StringVar(&o.PodmanSocket, "podman-socket", "", "libpod socket: a path or unix:///path, tcp://host:port, ssh://user@host[:port]/path/to/podman.sock; empty: the standard socket, or a private podman service runlet starts")
	fs.StringVar(&o.PodmanIdentity, "podman-identity", os.Getenv("CONTAINER_SSHKEY"), "private key for an ssh:// --podman-socket (default $CONTAINER_SSHKEY; else the ssh agent at $SSH_AUTH_SOCK)")
	fs.StringVar(&o.PodmanKnownHosts, "podman-known-hosts", defaultKnownHosts(), "known_hosts file that verifies the host key of an ssh:// --podman-socket")
	fs.StringVar(&o.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", "", "serving certificate of the kubelet API; empty: self-signed")
	fs.StringVar(&o.TLSKeyFile, "tls-private-key-file", "", "private key of --tls-cert-file")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", "", "CA bundle that verifies client certificates (e.g. the apiserver's)")
	fs.IntVar(&o.MaxPods, "max-pods", 110, "number of pods the node can run")
	fs.StringVar(&o.RootDir, "root-dir", "/var/lib/runlet", "directory for runlet's state")
	fs.StringVar(&o.MetricsAddr, "metrics-addr", defaultMetricsAddr, "address of runlet's own Prometheus /metrics and /healthz; empty disables both")
	fs.StringVar(&o.PodManifestPath, "pod-manifest-path", "", "directory of static pod manifests")
	fs.StringVar(&o.ManifestURL, "manifest-url", "", "URL serving a Pod or PodList of static pods")
	fs.StringArrayVar(&o.ManifestURLHeader, "manifest-url-header", nil, "HTTP header for --manifest-url, 'Key:Value' (repeatable)")
	fs.DurationVar(&o.PLEGRelistPeriod, "pleg-relist-period", time.Second, "how often the backend is relisted")
	fs.BoolVar(&o.BootstrapServingCert, "bootstrap-serving-cert", false, "request the kubelet API's serving certificate with a CSR (signer kubernetes.io/kubelet-serving) and renew it before it expires; kept in <root-dir>/pki")
	fs.BoolVar(&o.AuthWebhook, "authentication-token-webhook", true, "authenticate bearer tokens with TokenReview")
	fs.StringVar(&o.AuthorizationMode, "authorization-mode", "Webhook", "Webhook (SubjectAccessReview) or AlwaysAllow")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", 100, "QPS to the apiserver")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", 200, "burst to the apiserver")
	fs.IntVar(&o.PodSyncWorkers, "pod-sync-workers", 10, "framework workers that hand pods to runlet")
	fs.Var(cliflag.NewMapStringString(&o.NodeLabels), "node-labels", "labels to add to the node, key=value[,key=value...]")
	fs.StringSliceVar(&o.RegisterWithTaints, "register-with-taints", nil, "taints to add to the node besides runlet's own, key[=value]:effect[,...]")
	fs.BoolVar(&o.ShowVersion, "version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if o.NodeName == "" {
		return nil, fmt.Errorf("--nodename is required")
	}
	if err := o.validateNode(); err != nil {
		return nil, err
	}
	if o.AuthorizationMode != "Webhook" && o.AuthorizationMode != "AlwaysAllow" {
		return nil, fmt.Errorf("--authorization-mode must be Webhook or AlwaysAllow, not %q", o.AuthorizationMode)
	}
	return o, nil
}
