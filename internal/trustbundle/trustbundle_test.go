package trustbundle

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/pem"
	"sort"
	"strings"
	"testing"

	certificatesv1 "k8s.io/api/certificates/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	certutil "k8s.io/client-go/util/cert"
)

func caPEM(t *testing.T, cn string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: cn}, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}))
}

func bundle(name, signer string, labels map[string]string, pems ...string) *certificatesv1.ClusterTrustBundle {
	return &certificatesv1.ClusterTrustBundle{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       certificatesv1.ClusterTrustBundleSpec{SignerName: signer, TrustBundle: strings.Join(pems, "")},
	}
}

func newManager(t *testing.T, served bool, objs ...*certificatesv1.ClusterTrustBundle) *Manager {
	t.Helper()
	client := fake.NewClientset()
	for _, o := range objs {
		if _, err := client.CertificatesV1().ClusterTrustBundles().Create(context.Background(), o, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if served {
		client.Resources = []*metav1.APIResourceList{{GroupVersion: "certificates.k8s.io/v1",
			APIResources: []metav1.APIResource{{Name: "clustertrustbundles"}}}}
	}
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	return New(client, stop)
}

// certs is the sorted set of PEM blocks in b.
func certs(b []byte) []string {
	var out []string
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			break
		}
		out = append(out, string(pem.EncodeToMemory(blk)))
	}
	sort.Strings(out)
	return out
}

func sorted(s ...string) []string { sort.Strings(s); return s }

func TestByName(t *testing.T) {
	a, b := caPEM(t, "a"), caPEM(t, "b")
	m := newManager(t, true, bundle("one", "", nil, a, b, a))
	ctx := context.Background()
	got, err := m.ByName(ctx, "one", false)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := certs(got), sorted(a, b); strings.Join(g, "") != strings.Join(w, "") {
		t.Errorf("anchors of one: got %d certificates, want the 2 distinct ones", len(g))
	}
	if got, err := m.ByName(ctx, "missing", true); err != nil || len(got) != 0 {
		t.Errorf("missing optional bundle: %q, %v; want empty, no error", got, err)
	}
	if _, err := m.ByName(ctx, "missing", false); err == nil {
		t.Error("missing required bundle: no error")
	}
}

func TestBySigner(t *testing.T) {
	a, b, c := caPEM(t, "a"), caPEM(t, "b"), caPEM(t, "c")
	const signer = "example.com/signer"
	m := newManager(t, true,
		bundle("example.com:signer:live", signer, map[string]string{"alive": "true"}, a),
		bundle("example.com:signer:dead", signer, map[string]string{"alive": "false"}, b),
		bundle("other", "example.com/other", map[string]string{"alive": "true"}, c))
	ctx := context.Background()
	cases := []struct {
		name     string
		sel      *metav1.LabelSelector
		optional bool
		want     []string
		wantErr  bool
	}{
		{"label selector", &metav1.LabelSelector{MatchLabels: map[string]string{"alive": "true"}}, false, sorted(a), false},
		{"empty selector: all of the signer's", &metav1.LabelSelector{}, false, sorted(a, b), false},
		{"nil selector matches nothing, optional", nil, true, nil, false},
		{"nil selector matches nothing, required", nil, false, nil, true},
		{"no match, optional", &metav1.LabelSelector{MatchLabels: map[string]string{"x": "y"}}, true, nil, false},
	}
	for _, tc := range cases {
		got, err := m.BySigner(ctx, signer, tc.sel, tc.optional)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: error %v, want error %v", tc.name, err, tc.wantErr)
			continue
		}
		if strings.Join(certs(got), "") != strings.Join(tc.want, "") {
			t.Errorf("%s: got %d certificates, want %d", tc.name, len(certs(got)), len(tc.want))
		}
	}
}

func TestNotServed(t *testing.T) {
	m := newManager(t, false)
	_, err := m.ByName(context.Background(), "one", true)
	if err == nil || !strings.Contains(err.Error(), "does not serve") {
		t.Errorf("an API without ClusterTrustBundles: %v; want an error naming it", err)
	}
}
