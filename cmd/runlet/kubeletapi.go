package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/runlet/runlet/internal/kubeletserver"
	"github.com/sirupsen/logrus"
	"k8s.io/client-go/kubernetes"
)

// kubeletTLS picks the kubelet API's serving certificate and says where it
// came from; a self-signed one is a last resort that clients cannot verify.
func kubeletTLS(ctx context.Context, o *options, client kubernetes.Interface, nodeIP string, log *logrus.Entry) (*tls.Config, error) {
	cfg, src, err := kubeletserver.TLSConfig(ctx, kubeletserver.TLSOptions{
		CertFile: o.TLSCertFile, KeyFile: o.TLSKeyFile, NodeName: o.NodeName, NodeIP: nodeIP,
		Bootstrap: o.BootstrapServingCert, Client: client, CertDir: o.CertDir,
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
	return cfg, nil
}

// kubeletAuth puts authentication and authorization in front of the API.
func kubeletAuth(ctx context.Context, o *options, client kubernetes.Interface, h http.Handler, log *logrus.Entry) (http.Handler, error) {
	webhook := o.AuthorizationMode == "Webhook"
	if !webhook {
		log.Warn("--authorization-mode=AlwaysAllow: the kubelet API accepts every request without authentication")
	}
	opts := kubeletserver.AuthOptions{Webhook: webhook, TokenWebhook: o.AuthWebhook, ClientCAFile: o.ClientCAFile}
	if webhook {
		log.WithField("clientCA", kubeletserver.ClientCASource(o.ClientCAFile)).Info("kubelet API verifies client certificates against this CA")
		if o.ClientCAFile == "" {
			opts.OnClientCAChange = clusterCAWatch(ctx, log)
		}
	}
	return kubeletserver.Handler(ctx, client, o.NodeName, opts, h)
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
