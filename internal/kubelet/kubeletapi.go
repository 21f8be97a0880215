package kubelet

import (
	"bytes"
	"context"
	"crypto/tls"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/runlet/runlet/internal/kubeletconfig"
	"github.com/runlet/runlet/internal/kubeletserver"
	"github.com/runlet/runlet/internal/streaming"
	"github.com/runlet/runlet/internal/vknode"
	"github.com/sirupsen/logrus"
	"k8s.io/client-go/kubernetes"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
)

// APIConfig is the kubelet API's: where it listens, its serving
// certificate, whom it lets in.
type APIConfig struct {
	// Address and Port are --address and --kubelet-port.
	Address string
	Port    int32
	// TLSCertFile and TLSKeyFile are the serving certificate
	// (--tls-cert-file, --tls-private-key-file); none: a self-signed one.
	TLSCertFile, TLSKeyFile string
	// RotateServerCertificates requests the serving certificate from the
	// cluster (--rotate-server-certificates) and keeps it in CertDir.
	RotateServerCertificates bool
	CertDir                  string
	// AuthorizationMode is Webhook (SubjectAccessReview) or AlwaysAllow.
	AuthorizationMode string
	// TokenWebhook authenticates bearer tokens with TokenReview
	// (--authentication-token-webhook).
	TokenWebhook bool
	// ClientCAFile verifies client certificates; empty: the apiserver's
	// client CA, read from the cluster.
	ClientCAFile string
	// Configz is the effective configuration, served at /configz.
	Configz *kubeletv1beta1.KubeletConfiguration
}

// kubeletAPI is the kubelet port's TLS config and its handler, the paths
// behind authentication and authorization.
func kubeletAPI(ctx context.Context, cfg NodeConfig, d NodeDeps, c *Kubelet, pods *vknode.PodInformer) (*tls.Config, http.Handler, error) {
	tlsCfg, err := kubeletTLS(ctx, cfg, d.Client, d.Log)
	if err != nil {
		return nil, nil, err
	}
	mux, err := kubeletRoutes(cfg.API, d, c, pods)
	if err != nil {
		return nil, nil, err
	}
	handler, err := kubeletAuth(ctx, cfg, d.Client, mux, d.Log)
	return tlsCfg, handler, err
}

// kubeletRoutes are the kubelet API's paths: the container and node paths
// of the streaming server, runlet's own /metrics (as the kubelet serves
// its /metrics on its authenticated port, nodes/metrics; --metrics-addr is
// the loopback copy), and /configz.
func kubeletRoutes(cfg APIConfig, d NodeDeps, c *Kubelet, pods *vknode.PodInformer) (*http.ServeMux, error) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.Handler())
	configz, err := kubeletconfig.Handler(cfg.Configz)
	if err != nil {
		return nil, err
	}
	mux.Handle("/configz", configz)
	streams := streaming.New(streaming.Config{Pods: c, Static: c.Mirror(), Backend: c, Runtime: d.Backend, Stats: c.Stats()})
	mux.Handle("/", kubeletserver.Routes(streams, c.RunningPods, pods.Lister()))
	return mux, nil
}

// kubeletTLS picks the kubelet API's serving certificate and says where it
// came from; a self-signed one is a last resort that clients cannot verify.
func kubeletTLS(ctx context.Context, cfg NodeConfig, client kubernetes.Interface, log *logrus.Entry) (*tls.Config, error) {
	api := cfg.API
	tlsCfg, src, err := kubeletserver.TLSConfig(ctx, kubeletserver.TLSOptions{
		CertFile: api.TLSCertFile, KeyFile: api.TLSKeyFile, NodeName: cfg.NodeName, NodeIP: cfg.NodeIP,
		Bootstrap: api.RotateServerCertificates, Client: client, CertDir: api.CertDir,
	})
	if err != nil {
		return nil, err
	}
	switch src {
	case kubeletserver.CertFromSelfSigned:
		log.Warn("no --tls-cert-file given: serving the kubelet API with a self-signed certificate")
	case kubeletserver.CertFromCluster:
		log.WithField("signer", "kubernetes.io/kubelet-serving").Info("serving certificate requested from the cluster; " +
			"it is used once its CSR is approved (kubectl get csr; kubectl certificate approve <name>)")
	}
	return tlsCfg, nil
}

// kubeletAuth puts authentication and authorization in front of the API.
func kubeletAuth(ctx context.Context, cfg NodeConfig, client kubernetes.Interface, h http.Handler, log *logrus.Entry) (http.Handler, error) {
	api := cfg.API
	webhook := api.AuthorizationMode == "Webhook"
	if !webhook {
		log.Warn("--authorization-mode=AlwaysAllow: the kubelet API accepts every request without authentication")
	}
	opts := kubeletserver.AuthOptions{Webhook: webhook, TokenWebhook: api.TokenWebhook, ClientCAFile: api.ClientCAFile}
	if webhook {
		log.WithField("clientCA", kubeletserver.ClientCASource(api.ClientCAFile)).Info("kubelet API verifies client certificates against this CA")
		if api.ClientCAFile == "" {
			opts.OnClientCAChange = clusterCAWatch(ctx, log)
		}
	}
	return kubeletserver.Handler(ctx, client, cfg.NodeName, opts, h)
}

// clusterCAWatch logs each client CA read from the cluster, and warns when
// none has been read a while after the start: until then the apiserver's
// `kubectl logs` and `exec` get 401.
func clusterCAWatch(ctx context.Context, log *logrus.Entry) func([]byte) {
	var seen atomic.Bool
	go func() {
		select {
		case <-ctx.Done():
		case <-time.After(30 * time.Second):
			if !seen.Load() {
				log.Warnf("no client CA read from %s yet: client certificates (the apiserver's kubectl logs/exec) are refused; "+
					"check that runlet may read that ConfigMap, or give --client-ca-file", kubeletserver.ClientCASource(""))
			}
		}
	}()
	return func(bundle []byte) {
		seen.Store(true)
		log.WithFields(logrus.Fields{"source": kubeletserver.ClientCASource(""), "certificates": bytes.Count(bundle, []byte("BEGIN CERTIFICATE"))}).
			Info("client CA read from the cluster")
	}
}
