package kubeletserver

import (
	"context"
	"errors"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	authenticationv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
)

// tokenReviewer authenticates a bearer token with a TokenReview, as the
// kubelet's --authentication-token-webhook does. It is the apiserver's
// webhook token authenticator without the webhook-file plumbing, whose
// package links the generic API server (see sarAuthorizer).
type tokenReviewer struct {
	reviews authenticationv1client.TokenReviewInterface
}

func (t tokenReviewer) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	wantAuds, checkAuds := authenticator.AudiencesFrom(ctx)
	review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: token, Audiences: wantAuds}}
	ctx, cancel := context.WithTimeout(ctx, webhookTimeout)
	defer cancel()
	var result *authenticationv1.TokenReview
	err := withRetry(ctx, func(ctx context.Context) (err error) {
		result, err = t.reviews.Create(ctx, review, metav1.CreateOptions{})
		return err
	})
	if err != nil {
		return nil, false, err
	}
	status := result.Status
	var auds authenticator.Audiences
	if checkAuds {
		// runlet has no implicit audiences: a review that names none
		// cannot prove the token was meant for this node.
		if auds = wantAuds.Intersect(status.Audiences); len(auds) == 0 {
			return nil, false, nil
		}
	}
	if !status.Authenticated {
		if status.Error != "" {
			return nil, false, errors.New(status.Error)
		}
		return nil, false, nil
	}
	return &authenticator.Response{User: reviewedUser(status.User), Audiences: auds}, true, nil
}

func reviewedUser(u authenticationv1.UserInfo) user.Info {
	var extra map[string][]string
	if u.Extra != nil {
		extra = make(map[string][]string, len(u.Extra))
		for k, v := range u.Extra {
			extra[k] = v
		}
	}
	return &user.DefaultInfo{Name: u.Username, UID: u.UID, Groups: u.Groups, Extra: extra}
}
