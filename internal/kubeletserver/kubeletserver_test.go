package kubeletserver

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

func TestRequestAttributesFollowTheKubelet(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		verb         string
		subs         []string
	}{
		{"GET", "/stats/summary", "get", []string{"stats"}},
		{"GET", "/stats", "get", []string{"stats"}},
		{"GET", "/statsx", "get", []string{"proxy"}},
		{"GET", "/metrics/resource", "get", []string{"metrics"}},
		{"GET", "/metrics", "get", []string{"metrics"}},
		{"GET", "/logs/messages", "get", []string{"log"}},
		{"GET", "/containerLogs/ns/p/c", "get", []string{"proxy"}},
		{"POST", "/exec/ns/p/c", "create", []string{"proxy"}},
		{"GET", "/portForward/ns/p", "get", []string{"proxy"}},
		{"GET", "/debug/pprof/goroutine", "get", []string{"proxy"}},
		{"GET", "/pods", "get", []string{"pods", "proxy"}},
		{"GET", "/runningpods/", "get", []string{"pods", "proxy"}},
		{"GET", "/healthz", "get", []string{"healthz", "proxy"}},
		{"GET", "/configz", "get", []string{"configz", "proxy"}},
		{"GET", "/flagz", "get", []string{"configz"}},
		{"POST", "/checkpoint/ns/p/c", "create", []string{"checkpoint"}},
		{"PUT", "/", "update", []string{"proxy"}},
	} {
		r := httptest.NewRequest(tc.method, tc.path, nil)
		attrs := requestAttributes("n1", &user.DefaultInfo{Name: "u"}, r)
		var subs []string
		for _, a := range attrs {
			subs = append(subs, a.GetSubresource())
			if a.GetVerb() != tc.verb || a.GetResource() != "nodes" || a.GetName() != "n1" || a.GetAPIVersion() != "v1" || !a.IsResourceRequest() {
				t.Errorf("%s %s: attributes %+v", tc.method, tc.path, a)
			}
		}
		if !reflect.DeepEqual(subs, tc.subs) {
			t.Errorf("%s %s: subresources %v; want %v", tc.method, tc.path, subs, tc.subs)
		}
	}
}

// fakeAuthn authenticates a bearer token naming the user; "bad" errors.
type fakeAuthn struct{}

func (fakeAuthn) AuthenticateRequest(r *http.Request) (*authenticator.Response, bool, error) {
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch tok {
	case "":
		return nil, false, nil
	case "bad":
		return nil, false, errors.New("invalid token")
	}
	return &authenticator.Response{User: &user.DefaultInfo{Name: tok}}, true, nil
}

// fakeAuthz allows "<user>:<subresource>" pairs and fails for user "broken".
type fakeAuthz map[string]bool

func (f fakeAuthz) Authorize(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
	if a.GetUser().GetName() == "broken" {
		return authorizer.DecisionNoOpinion, "", errors.New("webhook down")
	}
	if f[a.GetUser().GetName()+":"+a.GetSubresource()] {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

func TestAuthFilter(t *testing.T) {
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	f := &authFilter{authn: fakeAuthn{}, authz: fakeAuthz{"proxier:proxy": true, "statser:stats": true}, nodeName: "n1", next: next}
	for _, tc := range []struct {
		token, path string
		code        int
	}{
		{"", "/stats/summary", 401},
		{"bad", "/stats/summary", 401},
		{"statser", "/stats/summary", 200},
		{"statser", "/containerLogs/ns/p/c", 403},
		{"proxier", "/containerLogs/ns/p/c", 200},
		{"proxier", "/stats/summary", 403}, // nodes/proxy does not cover nodes/stats, as on the kubelet
		{"proxier", "/pods", 200},          // the fine-grained nodes/pods falls back to nodes/proxy
		{"broken", "/pods", 500},
	} {
		r := httptest.NewRequest("GET", tc.path, nil)
		if tc.token != "" {
			r.Header.Set("Authorization", "Bearer "+tc.token)
		}
		w := httptest.NewRecorder()
		f.ServeHTTP(w, r)
		if w.Code != tc.code {
			t.Errorf("%q %s: %d %s; want %d", tc.token, tc.path, w.Code, w.Body.String(), tc.code)
		}
	}
}

func TestServingCSRTemplate(t *testing.T) {
	tmpl := servingCSRTemplate("edge-1", "10.1.2.3")
	if tmpl.Subject.CommonName != "system:node:edge-1" || fmt.Sprint(tmpl.Subject.Organization) != "[system:nodes]" {
		t.Errorf("subject %+v", tmpl.Subject)
	}
	if fmt.Sprint(tmpl.DNSNames) != "[edge-1]" || len(tmpl.IPAddresses) != 1 || tmpl.IPAddresses[0].String() != "10.1.2.3" {
		t.Errorf("SANs %v %v", tmpl.DNSNames, tmpl.IPAddresses)
	}
	if len(tmpl.EmailAddresses) > 0 || len(tmpl.URIs) > 0 {
		t.Error("the kubelet-serving signer refuses email and URI SANs")
	}
}

func TestTLSConfigSources(t *testing.T) {
	cfg, src, err := TLSConfig(context.Background(), TLSOptions{NodeName: "n1", NodeIP: "127.0.0.1"})
	if err != nil || src != CertFromSelfSigned || len(cfg.Certificates) != 1 {
		t.Fatalf("no files: %v %v", src, err)
	}
	leaf, err := x509.ParseCertificate(cfg.Certificates[0].Certificate[0])
	if err != nil || leaf.VerifyHostname("127.0.0.1") != nil || leaf.VerifyHostname("n1") != nil {
		t.Errorf("self-signed certificate does not name the node: %v", err)
	}
	if _, _, err := TLSConfig(context.Background(), TLSOptions{CertFile: "/nonexistent.crt", KeyFile: "/nonexistent.key"}); err == nil {
		t.Error("missing --tls-cert-file accepted")
	}
	if _, _, err := TLSConfig(context.Background(), TLSOptions{Bootstrap: true, NodeName: "n1"}); err == nil {
		t.Error("bootstrap without a client accepted")
	}
}
