package clientcert

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/certificate"
	"k8s.io/client-go/util/connrotation"
)

// rotationCheck is how often the transport looks for a new certificate, as
// the kubelet's UpdateTransport.
const rotationCheck = 10 * time.Second

// rotatingTransport is the kubelet's UpdateTransport without its exit: the
// transport presents the manager's current certificate at each handshake,
// and when the manager swaps in a new one, every open connection is closed
// so that no request keeps running on the old identity. Where the kubelet
// exits once its certificate has expired, runlet keeps its pods running and
// lets the manager bootstrap again (its clientset falls back to the
// bootstrap credential), so a restart never costs a workload.
func rotatingTransport(ctx context.Context, cfg *rest.Config, mgr certificate.Manager, log *logrus.Entry) error {
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return fmt.Errorf("TLS for the API client: %w", err)
	}
	if tlsConfig == nil {
		tlsConfig = &tls.Config{}
	}
	tlsConfig.Certificates = nil
	tlsConfig.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
		if c := mgr.Current(); c != nil {
			return c, nil
		}
		return &tls.Certificate{}, nil
	}
	d := connrotation.NewDialer((&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext)
	var mu sync.Mutex
	last := mgr.Current()
	rotated := func() {
		mu.Lock()
		defer mu.Unlock()
		cur := mgr.Current()
		if cur == nil || cur == last {
			return
		}
		if last != nil {
			log.WithField("notAfter", cur.Leaf.NotAfter).Info("client certificate rotated: closing the API connections to use it")
		}
		last = cur
		d.CloseAll()
	}
	go wait.Until(rotated, rotationCheck, ctx.Done())

	cfg.Transport = utilnet.SetTransportDefaults(&http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		TLSHandshakeTimeout: 10 * time.Second,
		TLSClientConfig:     tlsConfig,
		MaxIdleConnsPerHost: 25,
		DialContext:         d.DialContext,
	})
	cfg.CertData, cfg.KeyData, cfg.CertFile, cfg.KeyFile = nil, nil, "", ""
	cfg.CAData, cfg.CAFile, cfg.Insecure, cfg.NextProtos = nil, "", false, nil
	return nil
}
