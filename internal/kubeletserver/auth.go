package kubeletserver

import (
	"context"
	"fmt"
	"net/http"

	"github.com/virtual-kubelet/virtual-kubelet/node/nodeutil"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/kubernetes"
)

// AuthOptions are the kubelet's authn/authz settings.
type AuthOptions struct {
	// Webhook turns on TokenReview/SubjectAccessReview; off means every
	// request is allowed, which only a test bench should want.
	Webhook      bool
	ClientCAFile string
}

// Handler wraps h with kubelet-style authentication and authorization.
func Handler(ctx context.Context, client kubernetes.Interface, nodeName string, o AuthOptions, h http.Handler) (http.Handler, error) {
	if !o.Webhook {
		return nodeutil.WithAuth(nodeutil.NoAuth(), h), nil
	}
	opts := []nodeutil.WebhookAuthOption{}
	if o.ClientCAFile != "" {
		ca, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca", o.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("--client-ca-file: %w", err)
		}
		go ca.Run(ctx, 1)
		opts = append(opts, func(c *nodeutil.WebhookAuthConfig) error {
			c.AuthnConfig.ClientCertificateCAContentProvider = ca
			return nil
		})
	}
	auth, err := nodeutil.WebhookAuth(client, nodeName, opts...)
	if err != nil {
		return nil, err
	}
	return nodeutil.WithAuth(auth, h), nil
}
