// Package kubeclient is runlet's API client: the API groups a node uses,
// behind client-go's kubernetes.Interface.
package kubeclient

import (
	"errors"
	"fmt"
	"net/http"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	appsv1 "k8s.io/client-go/kubernetes/typed/apps/v1"
	authenticationv1 "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authorizationv1 "k8s.io/client-go/kubernetes/typed/authorization/v1"
	certificatesv1 "k8s.io/client-go/kubernetes/typed/certificates/v1"
	certificatesv1beta1 "k8s.io/client-go/kubernetes/typed/certificates/v1beta1"
	coordinationv1 "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// Client serves the API groups of a node: core, coordination (the node
// lease), certificates (the serving certificate; client-go's CSR helper
// falls back to v1beta1; ClusterTrustBundles), authentication and
// authorization (the kubelet port's reviews), apps (uninstall), and
// discovery. kubernetes.NewForConfig builds a REST client for each of the
// cluster's fifty-odd group versions (2.7 MiB of runlet's resident memory);
// a node asks for seven. Every other group's accessor works, but each of its
// requests fails with an error that names the groups runlet serves: a
// library reaching for one gets an answer, not a nil client's panic.
type Client struct {
	kubernetes.Interface
	core         *corev1.CoreV1Client
	coordination *coordinationv1.CoordinationV1Client
	certificates *certificatesv1.CertificatesV1Client
	certsBeta    *certificatesv1beta1.CertificatesV1beta1Client
	authn        *authenticationv1.AuthenticationV1Client
	authz        *authorizationv1.AuthorizationV1Client
	apps         *appsv1.AppsV1Client
	discovery    *discovery.DiscoveryClient
}

// New builds the client for cfg, all groups sharing one HTTP client and,
// as in kubernetes.NewForConfig, one rate limiter.
func New(cfg *rest.Config) (*Client, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.RateLimiter == nil && cfg.QPS > 0 {
		cfg.RateLimiter = flowcontrol.NewTokenBucketRateLimiter(cfg.QPS, cfg.Burst)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("API client: %w", err)
	}
	c := &Client{}
	var errs [9]error
	var others rest.Interface
	others, errs[8] = unservedGroups()
	c.Interface = kubernetes.New(others)
	c.core, errs[0] = corev1.NewForConfigAndClient(cfg, hc)
	c.coordination, errs[1] = coordinationv1.NewForConfigAndClient(cfg, hc)
	c.certificates, errs[2] = certificatesv1.NewForConfigAndClient(cfg, hc)
	c.certsBeta, errs[3] = certificatesv1beta1.NewForConfigAndClient(cfg, hc)
	c.authn, errs[4] = authenticationv1.NewForConfigAndClient(cfg, hc)
	c.authz, errs[5] = authorizationv1.NewForConfigAndClient(cfg, hc)
	c.apps, errs[6] = appsv1.NewForConfigAndClient(cfg, hc)
	c.discovery, errs[7] = discovery.NewDiscoveryClientForConfigAndClient(cfg, hc)
	if err := errors.Join(errs[:]...); err != nil {
		return nil, fmt.Errorf("API client: %w", err)
	}
	return c, nil
}

func (c *Client) CoreV1() corev1.CoreV1Interface                         { return c.core }
func (c *Client) CoordinationV1() coordinationv1.CoordinationV1Interface { return c.coordination }
func (c *Client) CertificatesV1() certificatesv1.CertificatesV1Interface { return c.certificates }
func (c *Client) CertificatesV1beta1() certificatesv1beta1.CertificatesV1beta1Interface {
	return c.certsBeta
}
func (c *Client) AuthenticationV1() authenticationv1.AuthenticationV1Interface { return c.authn }
func (c *Client) AuthorizationV1() authorizationv1.AuthorizationV1Interface    { return c.authz }
func (c *Client) AppsV1() appsv1.AppsV1Interface                               { return c.apps }
func (c *Client) Discovery() discovery.DiscoveryInterfaces                     { return c.discovery }

// servedGroups names what Client serves, for unserved's error.
const servedGroups = "core/v1, coordination.k8s.io/v1, certificates.k8s.io/v1 and v1beta1, " +
	"authentication.k8s.io/v1, authorization.k8s.io/v1, apps/v1 and discovery"

// unservedGroups is the REST client of every group Client does not serve:
// each request fails before anything is sent, with an error naming the
// resource's path (without its group: one client stands for all of them).
func unservedGroups() (rest.Interface, error) {
	return rest.RESTClientFor(&rest.Config{
		Host: "https://unserved.invalid",
		ContentConfig: rest.ContentConfig{
			GroupVersion: &schema.GroupVersion{Version: "v1"}, NegotiatedSerializer: scheme.Codecs.WithoutConversion(),
		},
		Transport: refuse{},
	})
}

type refuse struct{}

func (refuse) RoundTrip(r *http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("runlet's API client does not serve the API group of %s; it serves %s", r.URL.Path, servedGroups)
}
