// Package clientcert is the node's client identity, as the kubelet's
// certificate package and its TLS bootstrap make it: from a bootstrap
// kubeconfig (a credential that may only create CSRs), runlet asks for a
// certificate for system:node:<name> in system:nodes, keeps it in the cert
// dir, writes a kubeconfig that uses it, and renews it before it expires.
// Every API client of runlet is built on the config this package returns, so
// every request runs as the node.
package clientcert

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/runlet/runlet/internal/atomicfile"
	"github.com/runlet/runlet/internal/kubeclient"
	"github.com/runlet/runlet/internal/logging"
	"github.com/sirupsen/logrus"
	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/certificate"
	"k8s.io/klog/v2"
)

// Options are the kubelet's flags of the same names.
type Options struct {
	// Kubeconfig is the node's kubeconfig: read when it holds a certificate
	// that has not expired, else written after bootstrap.
	Kubeconfig string
	// BootstrapKubeconfig is the credential that may only create CSRs.
	BootstrapKubeconfig string
	// CertDir keeps kubelet-client-current.pem and its predecessors.
	CertDir  string
	NodeName string
	// Rotate renews the certificate at 70-90 % of its lifetime.
	Rotate bool
	Log    *logrus.Entry
}

// Identity is the node's client certificate, managed.
type Identity struct {
	manager certificate.Manager
	log     *logrus.Entry
	// clusterCA is the CA bundle that verifies the apiserver.
	clusterCA []byte
}

// Current is the certificate in use; nil before the first one is issued,
// or once it has expired.
func (id *Identity) Current() *tls.Certificate { return id.manager.Current() }

// Stop ends the rotation.
func (id *Identity) Stop() { id.manager.Stop() }

// Bootstrap returns the REST config every API client of the node is built
// on: its transport presents the certificate the manager holds now, and
// closes its connections when a new one replaces it. It returns once a
// certificate is there, asking for one with the bootstrap credential if
// the kubeconfig has none that is valid; while it waits it says what it
// waits for, and it gives up only when ctx ends.
func Bootstrap(ctx context.Context, o Options) (*rest.Config, *Identity, error) {
	certCfg, nodeCfg, err := loadClientConfig(o, time.Now())
	if err != nil {
		return nil, nil, err
	}
	log := o.Log.WithField("component", "clientcert")
	mgr, err := newManager(ctx, o, certCfg, nodeCfg, log)
	if err != nil {
		return nil, nil, err
	}
	ca, err := caBundle(nodeCfg)
	if err != nil {
		return nil, nil, err
	}
	id := &Identity{manager: mgr, log: log, clusterCA: ca}
	cfg := rest.AnonymousClientConfig(nodeCfg)
	if err := rotatingTransport(ctx, cfg, mgr, log); err != nil {
		return nil, nil, err
	}
	mgr.Start()
	if err := id.wait(ctx); err != nil {
		mgr.Stop()
		return nil, nil, err
	}
	if !o.Rotate {
		mgr.Stop() // the certificate stays in use until it expires
	}
	registerTTL(id)
	return cfg, id, nil
}

// loadClientConfig is the kubelet's LoadClientConfig: with a kubeconfig
// whose certificate is still valid, that kubeconfig serves both to work and
// to renew; otherwise the bootstrap credential asks for the certificate,
// and the kubeconfig is written to point at the cert dir.
func loadClientConfig(o Options, now time.Time) (certCfg, nodeCfg *rest.Config, err error) {
	store, err := certificate.NewFileStore("kubelet-client", o.CertDir, o.CertDir, "", "")
	if err != nil {
		return nil, nil, fmt.Errorf("--cert-dir %s: %w", o.CertDir, err)
	}
	ok, err := stillValid(o.Kubeconfig, now)
	if err != nil {
		return nil, nil, err
	}
	if ok {
		cfg, err := LoadKubeconfig(o.Kubeconfig)
		if err != nil {
			return nil, nil, fmt.Errorf("--kubeconfig %s: %w", o.Kubeconfig, err)
		}
		return cfg, rest.CopyConfig(cfg), nil
	}
	boot, err := LoadKubeconfig(o.BootstrapKubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("--bootstrap-kubeconfig %s: %w", o.BootstrapKubeconfig, err)
	}
	if boot.CertData == nil && boot.CertFile == "" && boot.BearerToken == "" && boot.BearerTokenFile == "" &&
		boot.Username == "" && boot.ExecProvider == nil && boot.AuthProvider == nil {
		return nil, nil, fmt.Errorf("--bootstrap-kubeconfig %s: no credential (a token, a client certificate or an exec plugin) in its current context", o.BootstrapKubeconfig)
	}
	node := rest.AnonymousClientConfig(boot)
	node.CertFile, node.KeyFile = store.CurrentPath(), store.CurrentPath()
	if err := writeKubeconfig(boot, o.Kubeconfig, store.CurrentPath()); err != nil {
		return nil, nil, err
	}
	return boot, node, nil
}

// newManager is the kubelet's client certificate manager. It renews with
// the node's own certificate while that is valid (selfnodeclient) and falls
// back to the bootstrap credential once it has expired: a node that was cut
// off for longer than its certificate lives bootstraps again when the
// apiserver is back.
func newManager(ctx context.Context, o Options, certCfg, nodeCfg *rest.Config, log *logrus.Entry) (certificate.Manager, error) {
	store, err := certificate.NewFileStore("kubelet-client", o.CertDir, o.CertDir, nodeCfg.CertFile, nodeCfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("--cert-dir %s: %w", o.CertDir, err)
	}
	clientset := func(current *tls.Certificate) (kubernetes.Interface, error) {
		if current != nil {
			return kubeclient.New(nodeCfg)
		}
		return kubeclient.New(certCfg)
	}
	mctx := klog.NewContext(ctx, logging.Logr(log))
	mgr, err := certificate.NewManager(&certificate.Config{
		ClientsetFn: clientset,
		Template: &x509.CertificateRequest{Subject: pkix.Name{
			CommonName: "system:node:" + o.NodeName, Organization: []string{"system:nodes"}}},
		SignerName:              certificatesv1.KubeAPIServerClientKubeletSignerName,
		GetUsages:               certificate.DefaultKubeletClientGetUsages,
		BootstrapCertificatePEM: nodeCfg.CertData,
		BootstrapKeyPEM:         nodeCfg.KeyData,
		CertificateStore:        store,
		Name:                    "kubelet-client",
		Ctx:                     &mctx,
	})
	if err != nil {
		return nil, fmt.Errorf("client certificate manager: %w", err)
	}
	return mgr, nil
}

// waitReport is how often the wait for the first certificate says it is
// still waiting.
const waitReport = 15 * time.Second

// wait returns once the manager holds a certificate. The CSR's approval is
// someone else's (the controller-manager's csrapproving for a node-client
// CSR from a bootstrap token, or an operator): say so while waiting.
func (id *Identity) wait(ctx context.Context) error {
	start := time.Now()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	next := start.Add(waitReport)
	for id.manager.Current() == nil {
		select {
		case <-ctx.Done():
			return fmt.Errorf("no client certificate for the node after %s: %w", time.Since(start).Round(time.Second), ctx.Err())
		case now := <-tick.C:
			if now.After(next) {
				id.log.WithField("waited", now.Sub(start).Round(time.Second)).Warn("waiting for the node's client certificate: " +
					"a CSR for system:node:<nodename> (signer kubernetes.io/kube-apiserver-client-kubelet) awaits approval or signing; " +
					"the controller-manager approves it when the bootstrap credential may create certificatesigningrequests/nodeclient, " +
					"else approve it with kubectl certificate approve")
				next = now.Add(waitReport)
			}
		}
	}
	id.checkClock(id.manager.Current(), time.Now())
	return nil
}

// checkClock warns when the certificate is not valid yet by this host's
// clock: the apiserver accepts it by its own, but every check of its expiry
// here is off by as much.
func (id *Identity) checkClock(cert *tls.Certificate, now time.Time) {
	if cert == nil || cert.Leaf == nil {
		return
	}
	if now.Before(cert.Leaf.NotBefore) {
		id.log.WithFields(logrus.Fields{"notBefore": cert.Leaf.NotBefore, "now": now}).
			Warn("the node's client certificate is not valid yet by this host's clock: the clock is behind the cluster's; synchronise it (NTP)")
	}
	id.log.WithFields(logrus.Fields{"subject": cert.Leaf.Subject.String(), "notAfter": cert.Leaf.NotAfter}).
		Info("node client certificate ready")
}

// caBundle is the CA that verifies the apiserver, from the kubeconfig.
func caBundle(cfg *rest.Config) ([]byte, error) {
	if cfg.CAFile == "" {
		return cfg.CAData, nil
	}
	b, err := os.ReadFile(cfg.CAFile)
	if err != nil {
		return nil, fmt.Errorf("the cluster's CA: %w", err)
	}
	return b, nil
}

// WriteClusterCA writes the CA that verifies the apiserver to dir/ca.crt and
// returns the path; it fails when the kubeconfig trusts no CA of its own.
func (id *Identity) WriteClusterCA(dir string) (string, error) {
	if len(id.clusterCA) == 0 {
		return "", fmt.Errorf("the node's kubeconfig names no CA (certificate-authority): give --client-ca-file for the kubelet API")
	}
	path := filepath.Join(dir, "ca.crt")
	if err := atomicfile.Write(path, id.clusterCA); err != nil {
		return "", fmt.Errorf("writing the cluster's CA: %w", err)
	}
	return path, nil
}

// registerTTL exports the kubelet's certificate_manager_client_ttl_seconds:
// the seconds until the client certificate expires (negative once it has),
// +Inf while there is none.
func registerTTL(id *Identity) {
	g := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "runlet_certificate_manager_client_ttl_seconds",
		Help: "Seconds until the node's client certificate expires (negative once it has expired); +Inf while there is none.",
	}, func() float64 {
		if c := id.manager.Current(); c != nil && c.Leaf != nil {
			return math.Trunc(time.Until(c.Leaf.NotAfter).Seconds())
		}
		return math.Inf(1)
	})
	_ = prometheus.Register(g) // once per process; a second Bootstrap keeps the first gauge
}
