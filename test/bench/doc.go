// Package bench is `make bench`: runlet's figures from the design ("Figures runlet must reach"),
// each next to the same operation done straight against podman's API in the same run; then the runc
// backend's, next to raw runc + CNI (the backend driven in process) and to runlet on podman. It is a
// test binary (TestBench) that does nothing unless RUNLET_BENCH=1, so `go test ./...` skips it at once.
package bench
