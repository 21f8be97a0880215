package kubeletserver

import (
	"context"
	"errors"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// reviewClient answers TokenReviews and SubjectAccessReviews with answer,
// after failing the first failures calls with err, and counts the calls.
func reviewClient(resource string, failures int, err error, answer func(runtime.Object) runtime.Object) (*fake.Clientset, *int) {
	c := fake.NewClientset()
	calls := 0
	c.PrependReactor("create", resource, func(a k8stesting.Action) (bool, runtime.Object, error) {
		calls++
		if calls <= failures {
			return true, nil, err
		}
		return true, answer(a.(k8stesting.CreateAction).GetObject()), nil
	})
	return c, &calls
}

func TestTokenReviewer(t *testing.T) {
	answer := func(o runtime.Object) runtime.Object {
		r := o.(*authenticationv1.TokenReview).DeepCopy()
		switch r.Spec.Token {
		case "good":
			r.Status = authenticationv1.TokenReviewStatus{Authenticated: true, Audiences: []string{"api"},
				User: authenticationv1.UserInfo{Username: "alice", UID: "u1", Groups: []string{"devs"}, Extra: map[string]authenticationv1.ExtraValue{"k": {"v"}}}}
		case "expired":
			r.Status = authenticationv1.TokenReviewStatus{Error: "token expired"}
		}
		return r
	}
	c, calls := reviewClient("tokenreviews", 2, apierrors.NewTooManyRequests("busy", 0), answer)
	tr := tokenReviewer{reviews: c.AuthenticationV1().TokenReviews()}
	resp, ok, err := tr.AuthenticateToken(context.Background(), "good")
	if err != nil || !ok || resp.User.GetName() != "alice" || resp.User.GetUID() != "u1" ||
		resp.User.GetGroups()[0] != "devs" || resp.User.GetExtra()["k"][0] != "v" {
		t.Fatalf("good token: %+v %v %v", resp, ok, err)
	}
	if *calls != 3 {
		t.Errorf("%d calls; want two retried 429s and a success", *calls)
	}
	if _, ok, err := tr.AuthenticateToken(context.Background(), "expired"); ok || err == nil || err.Error() != "token expired" {
		t.Errorf("expired token: %v %v", ok, err)
	}
	if _, ok, err := tr.AuthenticateToken(context.Background(), "unknown"); ok || err != nil {
		t.Errorf("unknown token: %v %v", ok, err)
	}
	ctx := authenticator.WithAudiences(context.Background(), authenticator.Audiences{"other"})
	if _, ok, err := tr.AuthenticateToken(ctx, "good"); ok || err != nil {
		t.Errorf("token for another audience: %v %v", ok, err)
	}
}

func TestTokenReviewerGivesUpOnRefusal(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "tokenreviews"}, "", errors.New("no"))
	c, calls := reviewClient("tokenreviews", 10, forbidden, nil)
	if _, ok, err := (tokenReviewer{reviews: c.AuthenticationV1().TokenReviews()}).AuthenticateToken(context.Background(), "t"); ok || !apierrors.IsForbidden(err) {
		t.Errorf("%v %v; want the 403", ok, err)
	}
	if *calls != 1 {
		t.Errorf("%d calls; a 403 is not retried", *calls)
	}
}

func sarAttrs(name, subresource string) authorizer.Attributes {
	return authorizer.AttributesRecord{
		User: &user.DefaultInfo{Name: name, Groups: []string{"g"}}, Verb: "get", Resource: "nodes",
		Subresource: subresource, Name: "n1", ResourceRequest: true,
	}
}

func TestSARAuthorizer(t *testing.T) {
	var specs []authorizationv1.SubjectAccessReviewSpec
	answer := func(o runtime.Object) runtime.Object {
		r := o.(*authorizationv1.SubjectAccessReview).DeepCopy()
		specs = append(specs, r.Spec)
		switch r.Spec.User {
		case "admin":
			r.Status = authorizationv1.SubjectAccessReviewStatus{Allowed: true}
		case "banned":
			r.Status = authorizationv1.SubjectAccessReviewStatus{Denied: true, Reason: "banned"}
		case "odd":
			r.Status = authorizationv1.SubjectAccessReviewStatus{Denied: true, Allowed: true}
		}
		return r
	}
	c, calls := reviewClient("subjectaccessreviews", 1, apierrors.NewInternalError(errors.New("etcd")), answer)
	a := newSARAuthorizer(c.AuthorizationV1().SubjectAccessReviews())
	ctx := context.Background()
	for _, tc := range []struct {
		user string
		want authorizer.Decision
		err  bool
	}{
		{"admin", authorizer.DecisionAllow, false},
		{"nobody", authorizer.DecisionNoOpinion, false},
		{"banned", authorizer.DecisionDeny, false},
		{"odd", authorizer.DecisionDeny, true},
	} {
		if d, _, err := a.Authorize(ctx, sarAttrs(tc.user, "proxy")); d != tc.want || (err != nil) != tc.err {
			t.Errorf("%s: %v %v; want %v", tc.user, d, err, tc.want)
		}
	}
	want := authorizationv1.ResourceAttributes{Verb: "get", Resource: "nodes", Subresource: "proxy", Name: "n1"}
	if got := specs[0]; got.User != "admin" || got.Groups[0] != "g" || *got.ResourceAttributes != want {
		t.Errorf("review spec %+v", got)
	}
	before := *calls
	for _, u := range []string{"admin", "nobody"} {
		if _, _, err := a.Authorize(ctx, sarAttrs(u, "proxy")); err != nil {
			t.Fatal(err)
		}
	}
	if *calls != before {
		t.Errorf("cached answers asked again: %d calls, want %d", *calls, before)
	}
	if _, _, _ = a.Authorize(ctx, sarAttrs("admin", "stats")); *calls != before+1 {
		t.Error("another subresource answered from the cache")
	}
}

func TestSARAuthorizerDenialsExpireFirst(t *testing.T) {
	allowed := map[string]bool{}
	c, calls := reviewClient("subjectaccessreviews", 0, nil, func(o runtime.Object) runtime.Object {
		r := o.(*authorizationv1.SubjectAccessReview).DeepCopy()
		r.Status.Allowed = allowed[r.Spec.User]
		return r
	})
	a := newSARAuthorizer(c.AuthorizationV1().SubjectAccessReviews())
	a.allowTTL, a.denyTTL = time.Hour, time.Millisecond
	ctx := context.Background()
	_, _, _ = a.Authorize(ctx, sarAttrs("bob", "proxy"))
	allowed["bob"] = true
	time.Sleep(5 * time.Millisecond)
	if d, _, _ := a.Authorize(ctx, sarAttrs("bob", "proxy")); d != authorizer.DecisionAllow || *calls != 2 {
		t.Errorf("a denial outlived its TTL: %v after %d calls", d, *calls)
	}
	allowed["bob"] = false
	time.Sleep(5 * time.Millisecond)
	if d, _, _ := a.Authorize(ctx, sarAttrs("bob", "proxy")); d != authorizer.DecisionAllow || *calls != 2 {
		t.Errorf("an allowed answer was not kept: %v after %d calls", d, *calls)
	}
}

func TestSARAuthorizerErrorIsNoOpinion(t *testing.T) {
	c, _ := reviewClient("subjectaccessreviews", 100, apierrors.NewUnauthorized("bad credentials"), nil)
	a := newSARAuthorizer(c.AuthorizationV1().SubjectAccessReviews())
	if d, _, err := a.Authorize(context.Background(), sarAttrs("x", "proxy")); d != authorizer.DecisionNoOpinion || err == nil {
		t.Errorf("%v %v; want no opinion and the error", d, err)
	}
}
