package kubeclient

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

var _ kubernetes.Interface = (*Client)(nil)

// TestClientServesTheGroupsRunletCalls: each group runlet calls, itself or
// through client-go's CSR helper, token manager and CA controller, reaches
// the apiserver at its path, and all share one rate limiter.
func TestClientServesTheGroupsRunletCalls(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	c, err := New(&rest.Config{Host: srv.URL, QPS: 50, Burst: 100})
	if err != nil {
		t.Fatal(err)
	}
	ctx, get := context.Background(), metav1.GetOptions{}
	_, _ = c.CoreV1().Pods("ns").Get(ctx, "p", get)
	_, _ = c.CoordinationV1().Leases("kube-node-lease").Get(ctx, "n", get)
	_, _ = c.CertificatesV1().CertificateSigningRequests().Get(ctx, "csr", get)
	_, _ = c.CertificatesV1beta1().CertificateSigningRequests().Get(ctx, "csr", get)
	_, _ = c.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{}, metav1.CreateOptions{})
	_, _ = c.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{}, metav1.CreateOptions{})
	_, _ = c.AppsV1().DaemonSets("ns").Get(ctx, "ds", get)
	_, _ = c.Discovery().ServerResourcesForGroupVersion("v1")
	want := []string{
		"GET /api/v1",
		"GET /api/v1/namespaces/ns/pods/p",
		"GET /apis/apps/v1/namespaces/ns/daemonsets/ds",
		"GET /apis/certificates.k8s.io/v1/certificatesigningrequests/csr",
		"GET /apis/certificates.k8s.io/v1beta1/certificatesigningrequests/csr",
		"GET /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n",
		"POST /apis/authentication.k8s.io/v1/tokenreviews",
		"POST /apis/authorization.k8s.io/v1/subjectaccessreviews",
	}
	sort.Strings(paths)
	if strings.Join(paths, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(paths, "\n"), strings.Join(want, "\n"))
	}
	limiter := c.core.RESTClient().(*rest.RESTClient).GetRateLimiter()
	for _, rc := range []rest.Interface{c.coordination.RESTClient(), c.certificates.RESTClient(), c.authn.RESTClient(),
		c.authz.RESTClient(), c.apps.RESTClient(), c.discovery.RESTClient()} {
		if rc.(*rest.RESTClient).GetRateLimiter() != limiter {
			t.Error("a group has its own rate limiter: --kube-api-qps would apply per group")
		}
	}
}

// A group runlet does not serve answers with an error naming what it
// serves, and sends nothing: no nil client to panic on.
func TestClientRefusesOtherGroups(t *testing.T) {
	var hits int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer srv.Close()
	c, err := New(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.BatchV1().Jobs("ns").List(context.Background(), metav1.ListOptions{})
	if err == nil || !strings.Contains(err.Error(), "/namespaces/ns/jobs") || !strings.Contains(err.Error(), "core/v1") {
		t.Errorf("BatchV1 list: %v; want an error naming the path and the served groups", err)
	}
	if _, err := c.StorageV1().StorageClasses().Get(context.Background(), "x", metav1.GetOptions{}); err == nil {
		t.Error("StorageV1 get succeeded")
	}
	if hits != 0 {
		t.Errorf("%d requests reached the apiserver for unserved groups", hits)
	}
}
