package kubeletserver

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authentication/request/websocket"
	"k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/authentication/token/cache"
	"k8s.io/apiserver/pkg/authorization/authorizer"
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
	authz := newSARAuthorizer(client.AuthorizationV1().SubjectAccessReviews())
	return &authFilter{authn: authn, authz: authz, nodeName: nodeName, next: h}, nil
}

// newAuthenticator is the apiserver's delegating authenticator as the
// kubelet builds it: client certificates, then bearer tokens (in the
// header or a websocket subprotocol) checked by TokenReview and cached.
func newAuthenticator(ctx context.Context, client kubernetes.Interface, o AuthOptions) (authenticator.Request, error) {
	ca, err := clientCA(ctx, client, o)
	if err != nil {
		return nil, err
	}
	authns := []authenticator.Request{x509.NewDynamic(ca.VerifyOptions, x509.CommonNameUserConversion)}
	if o.TokenWebhook {
		tokens := cache.New(tokenReviewer{reviews: client.AuthenticationV1().TokenReviews()}, false, tokenCacheTTL, tokenCacheTTL)
		authns = append(authns, bearertoken.New(tokens), websocket.NewProtocolAuthenticator(tokens))
	}
	return group.NewAuthenticatedGroupAdder(union.New(authns...)), nil
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
