package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	nodeinfo "github.com/runlet/runlet/internal/node"
	"github.com/spf13/pflag"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	cliflag "k8s.io/component-base/cli/flag"
)

// options are runlet's flags; names follow the kubelet's and virtual-kubelet's.
type options struct {
	Kubeconfig   string
	NodeName     string
	KubeletPort  int32
	Address      string
	NodeIP       string
	PodmanSocket string
	LogLevel     string
	// LoggingFormat is the kubelet's --logging-format: text or json.
	LoggingFormat     string
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
	EventQPS          int32
	EventBurst        int32
	PodSyncWorkers    int
	ShowVersion       bool
	// ContainerLogMaxSize and ContainerLogMaxFiles are the kubelet's log rotation limits.
	ContainerLogMaxSize  int64
	ContainerLogMaxFiles int

	// ClusterDNS, ClusterDomain and ResolvConf are the kubelet's pod DNS flags.
	ClusterDNS    []net.IP
	ClusterDomain string
	ResolvConf    string
	// ImagePullTimeout bounds one image pull.
	ImagePullTimeout time.Duration
	// OfflineStartAfter is how long runlet waits for the apiserver at
	// start before it runs the pods of its checkpoint; 0: no checkpoint.
	OfflineStartAfter time.Duration
	// RegisterWithTaints and NodeLabels are the kubelet's flags of the same
	// names, applied when the node registers.
	RegisterWithTaints []v1.Taint
	NodeLabels         map[string]string
	// PodmanIdentity and PodmanKnownHosts authenticate an ssh:// --podman-socket.
	PodmanIdentity   string
	PodmanKnownHosts string

	// BootstrapServingCert is the kubelet's --rotate-server-certificates
	// (serverTLSBootstrap); --bootstrap-serving-cert is its old name.
	BootstrapServingCert bool
	// ConfigFile and ConfigDir are the kubelet's --config and --config-dir.
	ConfigFile, ConfigDir string

	// Node pressure and eviction (--eviction-hard, ...).
	evictionOptions
	// The pod network (--network-plugin, --cni-conf-dir, ...).
	networkOptions
	runtimeOptions
	// The node's client identity (--bootstrap-kubeconfig, --cert-dir, ...).
	identityOptions
	// Graceful node shutdown (the configuration file's shutdownGracePeriod, ...).
	shutdownOptions
	// Node resources and pod security, as the kubelet's flags.
	SystemReserved, KubeReserved map[string]string
	PodMaxPids                   int64
	AllowedUnsafeSysctls         []string
	SeccompDefault               bool

	// The flags' text, parsed while the values are checked.
	taints, logMaxSize string // --register-with-taints, --container-log-max-size
	// Parsed while the values are checked, before anything starts.
	reserved       []namedReservation // --system-reserved, --kube-reserved
	manifestHeader http.Header        // --manifest-url-header
	// warnings are logged once the logger is up.
	warnings []string
}

// namedReservation is a parsed reservation flag and its name.
type namedReservation struct {
	flag string
	list v1.ResourceList
}

func parseFlags(args []string) (*options, error) {
	o := &options{NodeLabels: map[string]string{}}
	fs := newFlagSet(o)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, helpRequested{usage: fs.FlagUsages()}
		}
		return nil, err
	}
	if fs.Changed("bootstrap-serving-cert") {
		o.warnings = append(o.warnings, "--bootstrap-serving-cert is deprecated: use --rotate-server-certificates")
	}
	if err := o.applyConfigFiles(args); err != nil {
		return nil, err
	}
	if err := o.resolveIdentity(fs.Changed("kubeconfig")); err != nil {
		return nil, err
	}
	return o, o.check()
}

// newFlagSet defines runlet's flags on o, which it sets to their defaults.
func newFlagSet(o *options) *pflag.FlagSet {
	host, _ := os.Hostname()
	fs := pflag.NewFlagSet("runlet", pflag.ContinueOnError)
	fs.StringVar(&o.Kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), "kubeconfig file; empty means in-cluster config")
	fs.StringVar(&o.NodeName, "nodename", defaultNodeName(host), "name of the node to register; never the host's own node name")
	fs.Int32Var(&o.KubeletPort, "kubelet-port", defaultKubeletPort, "port of the kubelet API (logs, exec, stats); not the kubelet's 10250, so both fit on one host")
	fs.StringVar(&o.Address, "address", "0.0.0.0", "IP address the kubelet API listens on")
	fs.StringVar(&o.NodeIP, "node-ip", "", "IP address of the node (InternalIP); default: the first non-loopback address")
	fs.StringVar(&o.PodmanSocket, "podman-socket", "", "libpod socket: a path or unix:///path, tcp://host:port, ssh://user@host[:port]/path/to/podman.sock; empty: the standard socket, or a private podman service runlet starts")
	fs.StringVar(&o.PodmanIdentity, "podman-identity", os.Getenv("CONTAINER_SSHKEY"), "private key for an ssh:// --podman-socket (default $CONTAINER_SSHKEY; else the ssh agent at $SSH_AUTH_SOCK)")
	fs.StringVar(&o.PodmanKnownHosts, "podman-known-hosts", defaultKnownHosts(), "known_hosts file that verifies the host key of an ssh:// --podman-socket")
	fs.StringVar(&o.LogLevel, "log-level", "info", "log level: debug, info, warn, error; it governs the libraries' klog lines too")
	fs.StringVar(&o.LoggingFormat, "logging-format", "text", "log format: text, or json for log collectors (klog's lines included)")
	fs.StringVar(&o.LoggingFormat, "log-format", "text", "the same as --logging-format")
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
	fs.BoolVar(&o.BootstrapServingCert, "rotate-server-certificates", false, "request the kubelet API's serving certificate with a CSR (signer kubernetes.io/kubelet-serving) and renew it before it expires; kept in --cert-dir")
	fs.BoolVar(&o.BootstrapServingCert, "bootstrap-serving-cert", false, "deprecated name of --rotate-server-certificates")
	fs.StringVar(&o.ConfigFile, "config", "", "KubeletConfiguration file (kubelet.config.k8s.io/v1beta1); the flags given on the command line override its fields")
	fs.StringVar(&o.ConfigDir, "config-dir", "", "directory of KubeletConfiguration drop-ins (*.conf), merged over --config in lexical order")
	fs.BoolVar(&o.AuthWebhook, "authentication-token-webhook", true, "authenticate bearer tokens with TokenReview")
	fs.StringVar(&o.AuthorizationMode, "authorization-mode", "Webhook", "Webhook (SubjectAccessReview) or AlwaysAllow")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", 100, "QPS to the apiserver for the pods' work")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", 200, "burst to the apiserver; events and the node's heartbeat have their own")
	fs.Int32Var(&o.EventQPS, "event-qps", 50, "QPS to limit event creations; 0: no limit")
	fs.Int32Var(&o.EventBurst, "event-burst", 100, "burst of event creations, within --event-qps")
	fs.IntVar(&o.PodSyncWorkers, "pod-sync-workers", 10, "framework workers that hand pods to runlet")
	fs.StringVar(&o.taints, "register-with-taints", nodeinfo.DefaultTaints, "taints the node registers with, comma-separated \"<key>=<value>:<effect>\" or \"<key>:<effect>\"; empty: none")
	nodeLabels := cliflag.ConfigurationMap(o.NodeLabels)
	fs.Var(&nodeLabels, "node-labels", "labels added to runlet's own when the node registers, comma-separated key=value pairs; kubernetes.io keys only those a kubelet may set")
	fs.BoolVar(&o.ShowVersion, "version", false, "print the version and exit")
	fs.StringVar(&o.logMaxSize, "container-log-max-size", "10Mi", "size a container's log file may reach before it is rotated (a quantity: 10Mi, 1Gi)")
	fs.IntVar(&o.ContainerLogMaxFiles, "container-log-max-files", 5, "log files a container may have, the live one included (at least 2)")
	fs.IPSliceVar(&o.ClusterDNS, "cluster-dns", nil, "IP addresses of the cluster DNS servers (comma-separated or repeated); ClusterFirst pods get them as their nameservers")
	fs.StringVar(&o.ClusterDomain, "cluster-domain", "", "domain of the cluster (e.g. cluster.local); pods search <ns>.svc.<domain>, svc.<domain> and <domain>")
	fs.StringVar(&o.ResolvConf, "resolv-conf", "/etc/resolv.conf", "resolver configuration file that pods' DNS settings start from; empty: none (nameserver 127.0.0.1)")
	fs.DurationVar(&o.ImagePullTimeout, "image-pull-timeout", 10*time.Minute, "how long one image pull may take before it is cancelled")
	fs.DurationVar(&o.OfflineStartAfter, "offline-start-after", defaultOfflineStartAfter, "runlet keeps its API pods in a checkpoint under --root-dir; when the apiserver has not listed the node's pods this long after runlet started, it runs the checkpoint's pods until it does; 0 keeps no checkpoint and waits for the apiserver")
	addEvictionFlags(fs, o)
	addResourceFlags(fs, o)
	addNetworkFlags(fs, &o.networkOptions)
	addRuntimeFlags(fs, &o.runtimeOptions)
	addIdentityFlags(fs, &o.identityOptions)
	fs.SetOutput(io.Discard) // errors are returned; --help's usage too, for main to print
	return fs
}

// check validates the final values, naming the flag of a bad one.
func (o *options) check() error {
	q, err := resource.ParseQuantity(o.logMaxSize)
	if err != nil || q.Value() <= 0 {
		return fmt.Errorf("--container-log-max-size %q is not a positive quantity", o.logMaxSize)
	}
	o.ContainerLogMaxSize = q.Value()
	if o.ContainerLogMaxFiles < 2 {
		return fmt.Errorf("--container-log-max-files must be at least 2, not %d", o.ContainerLogMaxFiles)
	}
	if err := o.parseEviction(); err != nil {
		return err
	}
	if err := o.validateNetwork(); err != nil {
		return err
	}
	if err := o.validateRuntime(); err != nil {
		return err
	}
	if o.NodeName == "" {
		return fmt.Errorf("--nodename is required")
	}
	if err := o.validateNode(); err != nil {
		return err
	}
	if err := o.validateValues(); err != nil {
		return err
	}
	if o.AuthorizationMode != "Webhook" && o.AuthorizationMode != "AlwaysAllow" {
		return fmt.Errorf("--authorization-mode must be Webhook or AlwaysAllow, not %q", o.AuthorizationMode)
	}
	if o.RegisterWithTaints, err = nodeinfo.ParseTaints(o.taints); err != nil {
		return fmt.Errorf("--register-with-taints: %w", err)
	}
	if err := nodeinfo.ValidateLabels(o.NodeLabels); err != nil {
		return fmt.Errorf("--node-labels: %w", err)
	}
	return nil
}

// helpRequested is parseFlags' answer to -h/--help: the usage to print on
// stdout before exiting 0.
type helpRequested struct{ usage string }

func (h helpRequested) Error() string { return "help requested" }

func (h helpRequested) Unwrap() error { return pflag.ErrHelp }

func (h helpRequested) print(w io.Writer) {
	fmt.Fprintf(w, "runlet registers a virtual node and runs the pods scheduled to it on a local podman or runc.\n\n"+
		"Usage:\n  runlet [flags]\n  runlet uninstall [flags]   (runlet uninstall --help)\n"+
		"  runlet image load FILE... (runlet image --help)\n  runlet shutdown [flags]    (runlet shutdown --help)\n\nFlags:\n%s", h.usage)
}
