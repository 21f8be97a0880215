// Package join takes a box from nothing to a runlet node that is about to do
// its TLS bootstrap, as `kubeadm join` does for a kubelet: token discovery of
// the cluster (discovery.go), the files the node starts from (files.go), and
// either an exec of runlet or its installation as the box's service
// (service.go).
package join

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"
	tokenjws "k8s.io/cluster-bootstrap/token/jws"
	tokenutil "k8s.io/cluster-bootstrap/token/util"
)

// Discovery says how to find and trust the cluster: kubeadm's
// BootstrapTokenDiscovery.
type Discovery struct {
	// Endpoint is the apiserver, host:port or an https URL.
	Endpoint string
	// Token is the bootstrap token, <id>.<secret>.
	Token string
	// CACertHashes pin the cluster CA: sha256:<hex> of its
	// SubjectPublicKeyInfo, any one of them matching.
	CACertHashes []string
	// UnsafeSkipCAVerification trusts any CA that cluster-info signed with
	// the token (the token secret alone authenticates the cluster).
	UnsafeSkipCAVerification bool
	// Timeout bounds the retries while the apiserver is unreachable or has
	// not yet signed cluster-info for the token; 0 tries once.
	Timeout time.Duration
	// Interval is the pause between tries; 0 means 5s, kubeadm's.
	Interval time.Duration
	Log      *logrus.Entry
}

// ClusterInfo is what discovery learned and now trusts.
type ClusterInfo struct {
	// Server is the apiserver URL of cluster-info's kubeconfig, the one the
	// node talks to from now on.
	Server string
	// CAData is the cluster CA bundle, PEM.
	CAData []byte
}

// Token is a parsed bootstrap token.
type Token struct{ ID, Secret string }

func (t Token) String() string { return tokenutil.TokenFromIDAndSecret(t.ID, t.Secret) }

// ParseToken checks the form of a bootstrap token without echoing its secret.
func ParseToken(s string) (Token, error) {
	if !tokenutil.IsValidBootstrapToken(s) {
		return Token{}, errors.New("not a bootstrap token: want <id>.<secret>, 6 and 16 characters of [a-z0-9]")
	}
	id, secret, _ := strings.Cut(s, ".")
	return Token{ID: id, Secret: secret}, nil
}

// ParseEndpoint turns host:port or an https URL into the apiserver's URL.
func ParseEndpoint(s string) (string, error) {
	if s == "" {
		return "", errors.New("no apiserver endpoint")
	}
	raw := s
	if !strings.Contains(s, "://") {
		raw = "https://" + s
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("apiserver endpoint %q: %w", s, err)
	}
	if u.Scheme != "https" {
		return "", fmt.Errorf("apiserver endpoint %q: only https is supported", s)
	}
	if u.Host == "" || u.Hostname() == "" {
		return "", fmt.Errorf("apiserver endpoint %q has no host", s)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("apiserver endpoint %q: want host:port or https://host:port[/path]", s)
	}
	return strings.TrimSuffix(u.String(), "/"), nil
}

// parseCAHash checks one sha256:<hex> pin, as kubeadm's pubkeypin.Set.Allow,
// and returns its lower-case hex.
func parseCAHash(s string) (string, error) {
	format, value, ok := strings.Cut(s, ":")
	if !ok || strings.Contains(value, ":") {
		return "", fmt.Errorf("%q: want sha256:<hex>", s)
	}
	if !strings.EqualFold(format, "sha256") {
		return "", fmt.Errorf("%q: unknown hash format %q, only sha256 is known", s, format)
	}
	if n := hex.DecodedLen(len(value)); n != sha256.Size {
		return "", fmt.Errorf("%q: want a %d byte SHA-256 hash, found %d bytes", s, sha256.Size, n)
	}
	if _, err := hex.DecodeString(value); err != nil {
		return "", fmt.Errorf("%q: not hex: %w", s, err)
	}
	return strings.ToLower(value), nil
}

// CAHash is kubeadm's public-key pin of cert: sha256:<hex> of its DER
// SubjectPublicKeyInfo, what `openssl x509 -pubkey | openssl pkey -pubin
// -outform der | sha256sum` prints.
func CAHash(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Validate checks the flags' values, with no network access; the errors
// name the flag at fault.
func (d *Discovery) Validate() error {
	if _, err := ParseEndpoint(d.Endpoint); err != nil {
		return err
	}
	if _, err := ParseToken(d.Token); err != nil {
		return fmt.Errorf("--token: %w", err)
	}
	for _, h := range d.CACertHashes {
		if _, err := parseCAHash(h); err != nil {
			return fmt.Errorf("--discovery-token-ca-cert-hash %w", err)
		}
	}
	if len(d.CACertHashes) == 0 && !d.UnsafeSkipCAVerification {
		return errors.New("--discovery-token-ca-cert-hash is required to trust the cluster's CA " +
			"(or --discovery-token-unsafe-skip-ca-verification, which trusts the token alone)")
	}
	return nil
}

// Discover fetches kube-public/cluster-info anonymously, checks its JWS
// signature with the token and its CA against the pins, then fetches it again
// over TLS verified by that CA and checks that both copies agree: kubeadm's
// token discovery (cmd/kubeadm/app/discovery/token).
func (d *Discovery) Discover(ctx context.Context) (*ClusterInfo, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	endpoint, _ := ParseEndpoint(d.Endpoint)
	token, _ := ParseToken(d.Token)
	pins := map[string]bool{}
	for _, h := range d.CACertHashes {
		v, _ := parseCAHash(h)
		pins[v] = true
	}

	insecure, err := d.fetch(ctx, &rest.Config{Host: endpoint, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}, token)
	if err != nil {
		return nil, err
	}
	kubeconfig, err := verifySignature(insecure, token)
	if err != nil {
		return nil, err
	}
	info, err := parseClusterInfo(kubeconfig)
	if err != nil {
		return nil, err
	}
	if len(pins) == 0 { // Validate let this through only with UnsafeSkipCAVerification
		d.logf("cluster-info is signed with the token; no CA hash to check (--discovery-token-unsafe-skip-ca-verification): using %s", info.Server)
		return info, nil
	}
	if err := checkPins(info.CAData, pins); err != nil {
		return nil, err
	}

	// The CA is trusted now: ask again over verified TLS, so that the server
	// answering is one that holds the CA's key.
	secure, err := d.fetch(ctx, &rest.Config{Host: endpoint, TLSClientConfig: rest.TLSClientConfig{CAData: info.CAData}}, token)
	if err != nil {
		return nil, fmt.Errorf("with the now trusted CA: %w", err)
	}
	if !bytes.Equal([]byte(secure.Data[bootstrapapi.KubeConfigKey]), kubeconfig) {
		return nil, fmt.Errorf("the %s ConfigMap fetched over verified TLS differs from the first, unverified copy", bootstrapapi.ConfigMapClusterInfo)
	}
	d.logf("cluster-info is signed with the token and its CA matches the pinned hash: using %s", info.Server)
	return info, nil
}

// fetch gets cluster-info, retrying until Timeout while the apiserver does
// not answer or has not yet signed cluster-info for this token (the
// bootstrapsigner adds the signature a moment after the token is made).
func (d *Discovery) fetch(ctx context.Context, cfg *rest.Config, token Token) (*corev1.ConfigMap, error) {
	cfg.Timeout = 10 * time.Second
	cfg.UserAgent = "runlet-join"
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	interval := d.Interval
	if interval == 0 {
		interval = 5 * time.Second
	}
	deadline := time.Now().Add(d.Timeout)
	for {
		cm, err := client.CoreV1().ConfigMaps(metav1.NamespacePublic).Get(ctx, bootstrapapi.ConfigMapClusterInfo, metav1.GetOptions{})
		if err != nil {
			err = fmt.Errorf("fetching %s/%s from %s: %w", metav1.NamespacePublic, bootstrapapi.ConfigMapClusterInfo, cfg.Host, err)
		} else if _, ok := cm.Data[bootstrapapi.JWSSignatureKeyPrefix+token.ID]; !ok {
			err = fmt.Errorf("token id %q is unknown to this cluster or has expired: %s/%s has no signature %s%s "+
				"(make a new token on the control plane)", token.ID, metav1.NamespacePublic, bootstrapapi.ConfigMapClusterInfo,
				bootstrapapi.JWSSignatureKeyPrefix, token.ID)
		} else {
			return cm, nil
		}
		if !time.Now().Add(interval).Before(deadline) {
			return nil, err
		}
		d.logf("%v; retrying in %s", err, interval)
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(interval):
		}
	}
}

// verifySignature checks cluster-info's detached JWS for the token and
// returns the kubeconfig it signs.
func verifySignature(cm *corev1.ConfigMap, token Token) ([]byte, error) {
	kubeconfig := cm.Data[bootstrapapi.KubeConfigKey]
	if kubeconfig == "" {
		return nil, fmt.Errorf("the %s ConfigMap has no %q key: this apiserver is not set up for token discovery",
			bootstrapapi.ConfigMapClusterInfo, bootstrapapi.KubeConfigKey)
	}
	sig := cm.Data[bootstrapapi.JWSSignatureKeyPrefix+token.ID]
	if !tokenjws.DetachedTokenIsValid(sig, kubeconfig, token.ID, token.Secret) {
		return nil, fmt.Errorf("the %s ConfigMap's signature for token id %q does not match the token's secret: "+
			"wrong --token, or the server is not the cluster's", bootstrapapi.ConfigMapClusterInfo, token.ID)
	}
	return []byte(kubeconfig), nil
}

// parseClusterInfo reads the server and CA out of cluster-info's kubeconfig:
// the current context's cluster, or the only one.
func parseClusterInfo(kubeconfig []byte) (*ClusterInfo, error) {
	cfg, err := clientcmd.Load(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig in the %s ConfigMap: %w", bootstrapapi.ConfigMapClusterInfo, err)
	}
	var cluster *clientcmdapi.Cluster
	if c, ok := cfg.Contexts[cfg.CurrentContext]; ok {
		cluster = cfg.Clusters[c.Cluster]
	} else if len(cfg.Clusters) == 1 {
		for _, c := range cfg.Clusters {
			cluster = c
		}
	}
	if cluster == nil || cluster.Server == "" || len(cluster.CertificateAuthorityData) == 0 {
		return nil, fmt.Errorf("the kubeconfig in the %s ConfigMap names no cluster with a server and CA data", bootstrapapi.ConfigMapClusterInfo)
	}
	if _, err := certutil.ParseCertsPEM(cluster.CertificateAuthorityData); err != nil {
		return nil, fmt.Errorf("the CA in the %s ConfigMap: %w", bootstrapapi.ConfigMapClusterInfo, err)
	}
	return &ClusterInfo{Server: cluster.Server, CAData: cluster.CertificateAuthorityData}, nil
}

// checkPins accepts the CA bundle if any of its certificates' public key is
// pinned, as kubeadm's pubkeypin.Set.CheckAny.
func checkPins(caData []byte, pins map[string]bool) error {
	certs, err := certutil.ParseCertsPEM(caData)
	if err != nil {
		return fmt.Errorf("the CA in the %s ConfigMap: %w", bootstrapapi.ConfigMapClusterInfo, err)
	}
	var got []string
	for _, c := range certs {
		h := CAHash(c)
		if pins[strings.TrimPrefix(h, "sha256:")] {
			return nil
		}
		got = append(got, h)
	}
	return fmt.Errorf("the cluster CA in the %s ConfigMap has public key hash %s, which no --discovery-token-ca-cert-hash pins",
		bootstrapapi.ConfigMapClusterInfo, strings.Join(got, ", "))
}

func (d *Discovery) logf(format string, args ...any) {
	if d.Log != nil {
		d.Log.Infof(format, args...)
	}
}
