// Package bench is `make bench`: runlet on podman and runlet on runc beside the kubelet on
// containerd (hack/kubelet-node.sh), on one control plane, the same workloads on each in turn, and
// beside the same operations done straight against the raw backends (podman's API, runc + CNI) in
// the same run. It is a test binary (TestBench) that does nothing unless RUNLET_BENCH=1, so `go test
// ./...` skips it at once.
package bench
