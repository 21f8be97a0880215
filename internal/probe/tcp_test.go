package probe

import (
	"net"
	"strings"
	"testing"
	"time"
)

func TestTCPProbe(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	port := l.Addr().(*net.TCPAddr).Port
	if res, out, err := TCP("127.0.0.1", port, time.Second); res != Success || err != nil {
		t.Errorf("listening port: %s %q %v", res, out, err)
	}
	if res, out, _ := TCP("127.0.0.1", freePort(t), time.Second); res != Failure || !strings.Contains(out, "connection refused") {
		t.Errorf("closed port: %s %q", res, out)
	}
}
