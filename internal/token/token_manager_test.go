package token

import (
	"errors"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

// issuer hands out numbered tokens valid from the clock's now.
type issuer struct {
	clock *testingclock.FakeClock
	n     int
	fail  error
}

func (i *issuer) getToken(name, namespace string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	if i.fail != nil {
		return nil, i.fail
	}
	i.n++
	out := tr.DeepCopy()
	out.Status.Token = string(rune('a' + i.n - 1))
	out.Status.ExpirationTimestamp = metav1.NewTime(i.clock.Now().Add(time.Duration(*tr.Spec.ExpirationSeconds) * time.Second))
	return out, nil
}

func request(uid string, seconds int64) *authenticationv1.TokenRequest {
	return &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To(seconds),
		BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", Name: "p", UID: types.UID(uid)},
	}}
}

func newTestManager(start time.Time) (*Manager, *issuer, *testingclock.FakeClock) {
	clk := testingclock.NewFakeClock(start)
	iss := &issuer{clock: clk}
	return &Manager{getToken: iss.getToken, cache: map[string]*authenticationv1.TokenRequest{}, clock: clk}, iss, clk
}

// TestRefreshAtEightyPercent: a token is served from the cache until 80 % of
// its lifetime has passed (minus up to 10 s of jitter), then requested anew.
func TestRefreshAtEightyPercent(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m, iss, clk := newTestManager(start)
	get := func() string {
		t.Helper()
		tr, err := m.GetServiceAccountToken("ns", "default", request("u1", 3600))
		if err != nil {
			t.Fatal(err)
		}
		return tr.Status.Token
	}
	if tok := get(); tok != "a" || iss.n != 1 {
		t.Fatalf("first token %q after %d requests", tok, iss.n)
	}
	clk.SetTime(start.Add(2860 * time.Second)) // 79.4 %: more than the jitter before the 80 % mark
	if tok := get(); tok != "a" || iss.n != 1 {
		t.Fatalf("at 79 %% of its life: token %q after %d requests, want the cached one", tok, iss.n)
	}
	clk.SetTime(start.Add(2881 * time.Second)) // past 80 %
	if tok := get(); tok != "b" || iss.n != 2 {
		t.Fatalf("past 80 %% of its life: token %q after %d requests, want a new one", tok, iss.n)
	}
}

// TestRefreshAfterADay: a long-lived token is refreshed after 24 h anyway.
func TestRefreshAfterADay(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m, iss, clk := newTestManager(start)
	week := int64(7 * 24 * 3600)
	if _, err := m.GetServiceAccountToken("ns", "default", request("u1", week)); err != nil {
		t.Fatal(err)
	}
	clk.SetTime(start.Add(23 * time.Hour))
	_, _ = m.GetServiceAccountToken("ns", "default", request("u1", week))
	if iss.n != 1 {
		t.Fatalf("refreshed after 23 h (%d requests)", iss.n)
	}
	clk.SetTime(start.Add(24*time.Hour + time.Second))
	_, _ = m.GetServiceAccountToken("ns", "default", request("u1", week))
	if iss.n != 2 {
		t.Fatalf("not refreshed after 24 h (%d requests)", iss.n)
	}
}

// TestFailedRefresh: the old token serves while it is valid, an error once
// it has expired.
func TestFailedRefresh(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m, iss, clk := newTestManager(start)
	if _, err := m.GetServiceAccountToken("ns", "default", request("u1", 600)); err != nil {
		t.Fatal(err)
	}
	iss.fail = errors.New("apiserver down")
	clk.SetTime(start.Add(590 * time.Second))
	if tr, err := m.GetServiceAccountToken("ns", "default", request("u1", 600)); err != nil || tr.Status.Token != "a" {
		t.Fatalf("valid old token: %v, %v", tr, err)
	}
	clk.SetTime(start.Add(601 * time.Second))
	if _, err := m.GetServiceAccountToken("ns", "default", request("u1", 600)); err == nil {
		t.Fatal("expired token and a failed refresh gave no error")
	}
}

// TestDeleteServiceAccountToken: a pod's tokens go with it, others stay.
func TestDeleteServiceAccountToken(t *testing.T) {
	m, iss, _ := newTestManager(time.Now())
	for _, uid := range []string{"u1", "u2"} {
		if _, err := m.GetServiceAccountToken("ns", "default", request(uid, 3600)); err != nil {
			t.Fatal(err)
		}
	}
	m.DeleteServiceAccountToken("u1")
	_, _ = m.GetServiceAccountToken("ns", "default", request("u2", 3600))
	if iss.n != 2 {
		t.Fatalf("u2's token was dropped too (%d requests)", iss.n)
	}
	_, _ = m.GetServiceAccountToken("ns", "default", request("u1", 3600))
	if iss.n != 3 {
		t.Fatalf("u1's token survived its deletion (%d requests)", iss.n)
	}
}
