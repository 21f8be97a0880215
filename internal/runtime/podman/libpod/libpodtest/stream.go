package libpodtest

import (
	"bufio"
	"encoding/binary"
	"io"
	"net/http"
	"testing"
)

// Stream IDs in the frames of podman's multiplexed output.
const (
	Stdout = 1
	Stderr = 2
)

// Frame is one frame of a multiplexed stream: the stream ID, three zero
// bytes, the big-endian payload size, the payload.
func Frame(stream byte, s string) []byte {
	h := make([]byte, 8, 8+len(s))
	h[0] = stream
	binary.BigEndian.PutUint32(h[4:], uint32(len(s)))
	return append(h, s...)
}

// EchoExec answers like podman's exec start: 101, then it echoes stdin on
// stdout once the client half-closed, then writes "eof seen\n" to stderr.
func EchoExec(t testing.TB) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "tcp" || r.Header.Get("Connection") != "Upgrade" {
			t.Errorf("exec start without upgrade headers: %v", r.Header)
		}
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		_, _ = buf.WriteString("HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n")
		_ = buf.Flush()
		in, _ := io.ReadAll(bufio.NewReader(io.MultiReader(buf.Reader, conn)))
		_, _ = conn.Write(Frame(Stdout, "got:"+string(in)))
		_, _ = conn.Write(Frame(Stderr, "eof seen\n"))
	}
}
