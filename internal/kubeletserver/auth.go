package kubeletserver

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/kubernetes"
)

// AuthOptions are the kubelet's authn/authz settings.
type AuthOptions struct {
	// Webhook turns on authentication (client certificates, bearer tokens)
	// and SubjectAccessReview authorization; off means every request is
	// allowed, which only a test bench should want.
	Webhook bool
	// TokenWebhook authenticates bearer tokens with TokenReview
	// (--authentication-token-webhook).
	TokenWebhook bool
	// ClientCAFile verifies client certificates; it is re-read when it
	// changes, as the kubelet does. Empty: the apiserver's client CA, read
	// from kube-system/extension-apiserver-authentication and followed.
	ClientCAFile string
	// OnClientCAChange, if set, is told each CA bundle read from the
	// cluster (the first one included).
	OnClientCAChange func(bundle []byte)
}

// Cache lifetimes are the kubelet's defaults (KubeletConfiguration v1beta1).
const (
	tokenCacheTTL  = 2 * time.Minute
	allowCacheTTL  = 5 * time.Minute
	denyCacheTTL   = 30 * time.Second
	webhookTimeout = 10 * time.Second
)

// Handler wraps h with kubelet-style authentication and authorization.
// Anonymous requests are refused (401): runlet has no --anonymous-auth.
func Handler(ctx context.Context, client kubernetes.Interface, nodeName string, o AuthOptions, h http.Handler) (http.Handler, error) {
	if !o.Webhook {
		return h, nil
	}
	authn, err := newAuthenticator(ctx, client, o)
	if err != nil {
		return nil, err
	}
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: client.AuthorizationV1(),
		AllowCacheTTL:             allowCacheTTL,
		DenyCacheTTL:              denyCacheTTL,
		WebhookRetryBackoff:       options.DefaultAuthWebhookRetryBackoff(),
	}.New()
	if err != nil {
		return nil, fmt.Errorf("authorization webhook: %w", err)
	}
	return &authFilter{authn: authn, authz: authz, nodeName: nodeName, next: h}, nil
}

func newAuthenticator(ctx context.Context, client kubernetes.Interface, o AuthOptions) (authenticator.Request, error) {
	cfg := authenticatorfactory.DelegatingAuthenticatorConfig{
		CacheTTL:                 tokenCacheTTL,
		TokenAccessReviewTimeout: webhookTimeout,
		WebhookRetryBackoff:      options.DefaultAuthWebhookRetryBackoff(),
	}
	if o.TokenWebhook {
		cfg.TokenAccessReviewClient = client.AuthenticationV1()
	}
	ca, err := clientCA(ctx, client, o)
	if err != nil {
		return nil, err
	}
	cfg.ClientCertificateCAContentProvider = ca
	authn, _, err := cfg.New()
	return authn, err
}

// authFilter is the kubelet's InstallAuthFilter: authenticate, then allow
// the request if any of its attributes is authorized.
type authFilter struct {
	authn    authenticator.Request
	authz    authorizer.UnconditionalAuthorizer
	nodeName string
	next     http.Handler
}

func (f *authFilter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	resp, ok, err := f.authn.AuthenticateRequest(r)
	if err != nil || !ok {
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
		return
	}
	attrs := requestAttributes(f.nodeName, resp.User, r)
	var subresources []string
	for _, a := range attrs {
		subresources = append(subresources, a.GetSubresource())
		decision, _, err := f.authz.Authorize(r.Context(), a)
		if err != nil {
			http.Error(w, fmt.Sprintf("Authorization error (user=%s, verb=%s, resource=%s, subresource=%s)",
				a.GetUser().GetName(), a.GetVerb(), a.GetResource(), a.GetSubresource()), http.StatusInternalServerError)
			return
		}
		if decision == authorizer.DecisionAllow {
			f.next.ServeHTTP(w, r)
			return
		}
	}
	a := attrs[0]
	http.Error(w, fmt.Sprintf("Forbidden (user=%s, verb=%s, resource=%s, subresource(s)=%v)",
		a.GetUser().GetName(), a.GetVerb(), a.GetResource(), subresources), http.StatusForbidden)
}
