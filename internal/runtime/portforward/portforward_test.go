package portforward

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// echoServer answers each connection with what it read once the client
// half-closed, so a half-close that does not cross Splice hangs the test.
func echoServer(t *testing.T) int32 {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			b, _ := io.ReadAll(c)
			_, _ = c.Write(append([]byte("echo:"), b...))
			c.Close()
		}
	}()
	return int32(l.Addr().(*net.TCPAddr).Port)
}

// tcpPair is both ends of a loopback connection: the client's, and the
// stream a port-forward request hands over.
func tcpPair(t *testing.T) (client, stream *net.TCPConn) {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("tcp4", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c.(*net.TCPConn), s.(*net.TCPConn)
}

func TestDialLoopbackAndSplice(t *testing.T) {
	port := echoServer(t)
	// runlet's own namespace stands in for the pod's.
	conn, err := DialLoopback(context.Background(), "/proc/self/ns/net", port)
	if errors.Is(err, unix.EPERM) {
		t.Skip("entering a network namespace needs CAP_SYS_ADMIN")
	}
	if err != nil {
		t.Fatal(err)
	}
	client, stream := tcpPair(t)
	done := make(chan error, 1)
	go func() { done <- Splice(context.Background(), conn.(*net.TCPConn), stream) }()
	if _, err := io.WriteString(client, "ping"); err != nil {
		t.Fatal(err)
	}
	_ = client.CloseWrite()
	_ = client.SetDeadline(time.Now().Add(10 * time.Second))
	if got, err := io.ReadAll(client); err != nil || string(got) != "echo:ping" {
		t.Errorf("read %q, %v through the splice; want echo:ping", got, err)
	}
	if err := <-done; err != nil {
		t.Errorf("Splice = %v", err)
	}
}

func TestDialLoopbackWithoutNamespace(t *testing.T) {
	if _, err := DialLoopback(context.Background(), "/proc/self/ns/absent", 1); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("err = %v; want ENOENT, on which a caller tries the pod IP", err)
	}
}

// TestSpliceEndsWithContext: a cancelled forward ends at once, whatever
// either side does.
func TestSpliceEndsWithContext(t *testing.T) {
	_, conn := tcpPair(t)
	_, stream := tcpPair(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Splice(ctx, conn, stream) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Splice after cancel = %v; want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Splice did not end with its context")
	}
}
