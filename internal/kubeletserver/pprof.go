package kubeletserver

import (
	"net/http"
	"net/http/pprof"
	"strings"
)

// pprofBasePath is where the kubelet serves Go's profiles (its
// enableProfilingHandler, on by default); requests need nodes/proxy.
const pprofBasePath = "/debug/pprof/"

// profiles serves /debug/pprof/ as the kubelet's InstallProfilingHandler
// does: GET only, the named profiles and the index for the rest
// (goroutine, heap, ...).
func profiles(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		http.Error(w, "only GET is allowed", http.StatusMethodNotAllowed)
		return
	}
	switch strings.TrimPrefix(r.URL.Path, pprofBasePath) {
	case "profile":
		pprof.Profile(w, r)
	case "symbol":
		pprof.Symbol(w, r)
	case "cmdline":
		pprof.Cmdline(w, r)
	case "trace":
		pprof.Trace(w, r)
	default:
		pprof.Index(w, r)
	}
}
