package kubeletserver

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	authorizationv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
)

// sarCacheSize is the apiserver webhook authorizer's response cache size.
const sarCacheSize = 8192

// sarAuthorizer asks the apiserver with a SubjectAccessReview, as the
// kubelet's webhook authorization mode does, and keeps allowed answers for
// allowTTL and the others for denyTTL. It is the apiserver's webhook
// authorizer without its CEL match conditions, which a kubelet never has:
// that package links the CEL compiler and the generic API server (with the
// webhook token authenticator and virtual-kubelet's nodeutil, 8.8 MiB of
// runlet's resident memory).
type sarAuthorizer struct {
	reviews           authorizationv1client.SubjectAccessReviewInterface
	answers           *cache.LRUExpireCache
	allowTTL, denyTTL time.Duration
}

func newSARAuthorizer(reviews authorizationv1client.SubjectAccessReviewInterface) *sarAuthorizer {
	return &sarAuthorizer{reviews: reviews, answers: cache.NewLRUExpireCache(sarCacheSize), allowTTL: allowCacheTTL, denyTTL: denyCacheTTL}
}

func (a *sarAuthorizer) Authorize(ctx context.Context, attr authorizer.Attributes) (authorizer.Decision, string, error) {
	spec := reviewSpec(attr)
	key, err := json.Marshal(spec)
	if err != nil {
		return authorizer.DecisionNoOpinion, "", err
	}
	status, ok := a.cached(string(key))
	if !ok {
		review := &authorizationv1.SubjectAccessReview{Spec: spec}
		var result *authorizationv1.SubjectAccessReview
		err := withRetry(ctx, func(ctx context.Context) (err error) {
			result, err = a.reviews.Create(ctx, review, metav1.CreateOptions{})
			return err
		})
		if err != nil {
			return authorizer.DecisionNoOpinion, "", err
		}
		status = result.Status
		ttl := a.denyTTL
		if status.Allowed {
			ttl = a.allowTTL
		}
		a.answers.Add(string(key), status, ttl)
	}
	return decision(status)
}

func (a *sarAuthorizer) cached(key string) (authorizationv1.SubjectAccessReviewStatus, bool) {
	v, ok := a.answers.Get(key)
	if !ok {
		return authorizationv1.SubjectAccessReviewStatus{}, false
	}
	return v.(authorizationv1.SubjectAccessReviewStatus), true
}

func decision(s authorizationv1.SubjectAccessReviewStatus) (authorizer.Decision, string, error) {
	switch {
	case s.Denied && s.Allowed:
		return authorizer.DecisionDeny, s.Reason, fmt.Errorf("subject access review returned both allow and deny")
	case s.Denied:
		return authorizer.DecisionDeny, s.Reason, nil
	case s.Allowed:
		return authorizer.DecisionAllow, s.Reason, nil
	}
	return authorizer.DecisionNoOpinion, s.Reason, nil
}

// reviewSpec is the review of attr. The kubelet's request attributes carry
// no field or label selectors, so none are sent.
func reviewSpec(attr authorizer.Attributes) authorizationv1.SubjectAccessReviewSpec {
	var spec authorizationv1.SubjectAccessReviewSpec
	if u := attr.GetUser(); u != nil {
		spec.User, spec.UID, spec.Groups = u.GetName(), u.GetUID(), u.GetGroups()
		if extra := u.GetExtra(); extra != nil {
			spec.Extra = make(map[string]authorizationv1.ExtraValue, len(extra))
			for k, v := range extra {
				spec.Extra[k] = v
			}
		}
	}
	if !attr.IsResourceRequest() {
		spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: attr.GetPath(), Verb: attr.GetVerb()}
		return spec
	}
	spec.ResourceAttributes = &authorizationv1.ResourceAttributes{
		Namespace: attr.GetNamespace(), Verb: attr.GetVerb(), Group: attr.GetAPIGroup(), Version: attr.GetAPIVersion(),
		Resource: attr.GetResource(), Subresource: attr.GetSubresource(), Name: attr.GetName(),
	}
	return spec
}
