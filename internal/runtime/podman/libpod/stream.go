package libpod

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
)

// Frame stream IDs of podman's (Docker's) multiplexed output.
const (
	streamStdin  = 0
	streamStdout = 1
	streamStderr = 2
)

// Demux copies a multiplexed stream (8-byte header: stream ID, 3 zero bytes,
// big-endian payload size), as Logs, ExecStart and Attach without a TTY
// return it, to stdout and stderr until EOF. A nil writer discards its
// stream.
func Demux(r io.Reader, stdout, stderr io.Writer) error {
	var hdr [8]byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if hdr[0] > 3 || hdr[1] != 0 || hdr[2] != 0 || hdr[3] != 0 {
			return fmt.Errorf("malformed stream frame header % x", hdr)
		}
		w := stdout
		if hdr[0] == streamStderr {
			w = stderr
		}
		if w == nil {
			w = io.Discard
		}
		n := int64(binary.BigEndian.Uint32(hdr[4:]))
		if _, err := io.CopyN(w, r, n); err != nil {
			return err
		}
	}
}

// HijackedConn is a connection taken over after an HTTP upgrade: reads go
// through the buffered reader (it may hold stream bytes already), writes and
// the half-close go to the socket.
type HijackedConn struct {
	*bufio.Reader
	conn net.Conn
}

func (h *HijackedConn) Write(p []byte) (int, error) { return h.conn.Write(p) }

// CloseWrite half-closes the connection: podman reads it as stdin EOF.
func (h *HijackedConn) CloseWrite() error {
	if cw, ok := h.conn.(closeWriter); ok {
		return cw.CloseWrite()
	}
	return fmt.Errorf("podman connection %T cannot be half-closed", h.conn)
}

func (h *HijackedConn) Close() error { return h.conn.Close() }

// hijack sends a request asking for a raw stream (exec start, attach) and
// returns the connection once podman answered 101 or 200.
func (c *Client) hijack(ctx context.Context, path string, query url.Values, body any) (*HijackedConn, error) {
	conn, err := c.dialer.DialContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("podman POST %s: %w", path, err)
	}
	r := request{method: http.MethodPost, path: path, query: query}
	var buf bytes.Buffer
	if body != nil {
		_ = json.NewEncoder(&buf).Encode(body)
	}
	req, err := http.NewRequest(http.MethodPost, r.url(), &buf)
	if err != nil {
		conn.Close()
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "tcp")
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if err := req.Write(conn); err != nil {
		conn.Close()
		return nil, fmt.Errorf("podman POST %s: %w", path, err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("podman POST %s: %w", path, err)
	}
	if resp.StatusCode >= 400 {
		defer conn.Close()
		return nil, decodeAPIError(resp, "POST "+path)
	}
	return &HijackedConn{Reader: br, conn: conn}, nil
}

// Logs opens a container's log stream (multiplexed frames, even for a TTY
// container on the libpod API).
func (c *Client) Logs(ctx context.Context, id string, q url.Values) (io.ReadCloser, error) {
	resp, err := c.send(ctx, request{method: http.MethodGet, path: "/containers/" + url.PathEscape(id) + "/logs", query: q})
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// ExecCreate prepares an exec session and returns its ID.
func (c *Client) ExecCreate(ctx context.Context, id string, cfg ExecConfig) (string, error) {
	var out idAnswer
	err := c.do(ctx, request{method: http.MethodPost, path: "/containers/" + url.PathEscape(id) + "/exec", body: cfg}, &out)
	return out.ID, err
}

// ExecStart starts an exec session and returns its raw stream.
func (c *Client) ExecStart(ctx context.Context, execID string, tty bool) (*HijackedConn, error) {
	body := map[string]bool{"Detach": false, "Tty": tty}
	return c.hijack(ctx, "/exec/"+url.PathEscape(execID)+"/start", nil, body)
}

// ExecResize resizes an exec session's terminal.
func (c *Client) ExecResize(ctx context.Context, execID string, w, h uint16) error {
	return c.do(ctx, request{method: http.MethodPost, path: "/exec/" + url.PathEscape(execID) + "/resize", query: sizeQuery(w, h)}, nil)
}

// ExecInspect reports an exec session's state and exit code.
func (c *Client) ExecInspect(ctx context.Context, execID string) (ExecInspect, error) {
	var out ExecInspect
	err := c.do(ctx, request{method: http.MethodGet, path: "/exec/" + url.PathEscape(execID) + "/json"}, &out)
	return out, err
}

// Attach attaches to a running container's standard streams.
func (c *Client) Attach(ctx context.Context, id string, stdin, stdout, stderr bool) (*HijackedConn, error) {
	q := url.Values{"stream": {"true"}, "stdin": {strconv.FormatBool(stdin)},
		"stdout": {strconv.FormatBool(stdout)}, "stderr": {strconv.FormatBool(stderr)}}
	return c.hijack(ctx, "/containers/"+url.PathEscape(id)+"/attach", q, nil)
}

// ResizeContainer resizes a container's terminal.
func (c *Client) ResizeContainer(ctx context.Context, id string, w, h uint16) error {
	return c.do(ctx, request{method: http.MethodPost, path: "/containers/" + url.PathEscape(id) + "/resize", query: sizeQuery(w, h)}, nil)
}

func sizeQuery(w, h uint16) url.Values {
	return url.Values{"h": {strconv.Itoa(int(h))}, "w": {strconv.Itoa(int(w))}}
}
