// Package libpod is a small client of podman's libpod REST API (prefix
// /v4.0.0/libpod, served by podman 4.3 and 5.x) on net/http, over a unix
// socket, TCP or ssh (see Endpoint), without podman's Go modules: they
// would add some hundred modules and build tags for the few calls runlet
// makes. The JSON types are the subset of libpod's specgen and report
// types that runlet reads or sends.
//
// It knows podman's wire format and quirks (a pull's failure inside a 200
// answer, a pod start's per-container errors, hijacked exec and attach
// streams that need a half-close for stdin EOF), and nothing of
// Kubernetes: package podman builds the runlet backend on it, and tools
// (benchmarks, e2e tests) use it to talk to podman exactly as runlet does.
package libpod
