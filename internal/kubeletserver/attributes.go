package kubeletserver

import (
	"net/http"
	"strings"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
)

// requestAttributes is the kubelet's node request mapping (v1.37,
// pkg/kubelet/server/auth.go, with KubeletFineGrainedAuthz locked on):
// resource nodes, name the node, verb from the HTTP method, and the
// subresource from the path. Some paths have a fine-grained subresource
// tried first, then nodes/proxy. virtual-kubelet's NodeRequestAttr knows
// only stats, metrics, log and proxy, and a single attribute per request.
func requestAttributes(nodeName string, u user.Info, r *http.Request) []authorizer.Attributes {
	path := r.URL.Path
	var subresources []string
	switch {
	case isSubpath(path, "/allocatedPods"), isSubpath(path, "/pods"), isSubpath(path, "/runningpods/"):
		subresources = append(subresources, "pods")
	case isSubpath(path, "/healthz"):
		subresources = append(subresources, "healthz")
	case isSubpath(path, "/configz"):
		subresources = append(subresources, "configz")
	}
	switch {
	case isSubpath(path, "/stats/"):
		subresources = append(subresources, "stats")
	case isSubpath(path, "/metrics"):
		subresources = append(subresources, "metrics")
	case isSubpath(path, "/logs/"):
		subresources = append(subresources, "log") // "log" like pods/log
	case isSubpath(path, "/checkpoint/"):
		subresources = append(subresources, "checkpoint")
	case isSubpath(path, "/statusz"):
		subresources = append(subresources, "statusz")
	case isSubpath(path, "/flagz"):
		subresources = append(subresources, "configz")
	default:
		subresources = append(subresources, "proxy")
	}
	attrs := make([]authorizer.Attributes, 0, len(subresources))
	for _, sub := range subresources {
		attrs = append(attrs, authorizer.AttributesRecord{
			User: u, Verb: apiVerb(r.Method), APIVersion: "v1", Resource: "nodes", Subresource: sub,
			Name: nodeName, ResourceRequest: true, Path: path,
		})
	}
	return attrs
}

func apiVerb(method string) string {
	switch method {
	case http.MethodPost:
		return "create"
	case http.MethodGet:
		return "get"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		return "delete"
	}
	return ""
}

// isSubpath is the kubelet's: path itself or anything below it.
func isSubpath(subpath, path string) bool {
	path = strings.TrimSuffix(path, "/")
	return subpath == path || (strings.HasPrefix(subpath, path) && subpath[len(path)] == '/')
}
