/*
Copyright 2021 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Adapted from k8s.io/kubernetes v1.37.2 pkg/probe/grpc/grpc.go: the
// connection is made with grpc.NewClient (the blocking DialContext is
// deprecated), so a failure to connect surfaces from the health call and is
// told apart there. TLS mode is left out (GRPCContainerProbeTLS is alpha and
// off by default in 1.37).

package probe

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	grpchealth "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// GRPC calls grpc.health.v1.Health/Check for service on host:port within
// timeout. Any failure is a probe failure, as with the grpc_health_probe tool;
// the error is always nil.
func GRPC(host, service string, port int, timeout time.Duration) (Result, string, error) {
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	conn, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithUserAgent(UserAgent("probe")),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
			return Dialer().DialContext(ctx, "tcp", addr)
		}),
	)
	if err != nil {
		return Failure, fmt.Sprintf("error: failed to connect service at %q: %+v", addr, err), nil
	}
	defer func() { _ = conn.Close() }()

	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	resp, err := grpchealth.NewHealthClient(conn).Check(metadata.NewOutgoingContext(ctx, make(metadata.MD)),
		&grpchealth.HealthCheckRequest{Service: service}, grpc.WaitForReady(true))
	if err != nil {
		return Failure, grpcFailure(addr, timeout, err), nil
	}
	if resp.GetStatus() != grpchealth.HealthCheckResponse_SERVING {
		return Failure, fmt.Sprintf("service unhealthy (responded with %q)", resp.GetStatus().String()), nil
	}
	return Success, "service healthy", nil
}

// grpcFailure words a failed health call as the kubelet does.
func grpcFailure(addr string, timeout time.Duration, err error) string {
	stat, ok := status.FromError(err)
	if !ok {
		return fmt.Sprintf("error: health rpc probe failed: %+v", err)
	}
	switch stat.Code() {
	case codes.Unimplemented:
		return fmt.Sprintf("error: this server does not implement the grpc health protocol (grpc.health.v1.Health): %s", stat.Message())
	case codes.DeadlineExceeded:
		// WaitForReady: a server that never accepted the connection also
		// ends here, which the kubelet reports as a connect timeout.
		return fmt.Sprintf("timeout: failed to connect service %q within %v: %s", addr, timeout, stat.Message())
	}
	return fmt.Sprintf("error: health rpc probe failed: %+v", err)
}
