package kubeletserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestProfiles: the goroutine dump and the index answer GET; other methods
// are refused, as on the kubelet.
func TestProfiles(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		code         int
		body         string
	}{
		{http.MethodGet, "/debug/pprof/goroutine?debug=1", http.StatusOK, "goroutine profile:"},
		{http.MethodGet, "/debug/pprof/", http.StatusOK, "Types of profiles available"},
		{http.MethodPost, "/debug/pprof/goroutine", http.StatusMethodNotAllowed, ""},
	} {
		w := httptest.NewRecorder()
		profiles(w, httptest.NewRequest(tc.method, tc.path, nil))
		if w.Code != tc.code || !strings.Contains(w.Body.String(), tc.body) {
			t.Errorf("%s %s: %d %.80q; want %d with %q", tc.method, tc.path, w.Code, w.Body.String(), tc.code, tc.body)
		}
	}
}
