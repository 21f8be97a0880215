package probe

import (
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

func grpcServer(t *testing.T, withHealth bool) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	if withHealth {
		hs := health.NewServer()
		hs.SetServingStatus("down", healthpb.HealthCheckResponse_NOT_SERVING)
		healthpb.RegisterHealthServer(srv, hs)
	}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return l.Addr().(*net.TCPAddr).Port
}

func TestGRPCProbe(t *testing.T) {
	port := grpcServer(t, true)
	cases := []struct {
		service string
		want    Result
		output  string
	}{
		{"", Success, "service healthy"},
		{"down", Failure, `service unhealthy (responded with "NOT_SERVING")`},
		{"unknown", Failure, "error: health rpc probe failed"},
	}
	for _, c := range cases {
		res, out, err := GRPC("127.0.0.1", c.service, port, 5*time.Second)
		if res != c.want || err != nil || !strings.Contains(out, c.output) {
			t.Errorf("service %q: %s %q %v; want %s %q", c.service, res, out, err, c.want, c.output)
		}
	}
}

func TestGRPCProbeFailures(t *testing.T) {
	res, out, _ := GRPC("127.0.0.1", "", grpcServer(t, false), 5*time.Second)
	if res != Failure || !strings.Contains(out, "does not implement the grpc health protocol") {
		t.Errorf("server without health: %s %q", res, out)
	}
	res, out, _ = GRPC("127.0.0.1", "", freePort(t), 300*time.Millisecond)
	if res != Failure || !strings.Contains(out, "timeout: failed to connect service") {
		t.Errorf("nothing listening: %s %q", res, out)
	}
}
