package libpod

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

// apiPrefix is accepted by podman 4.x and 5.x alike; the newer servers keep
// serving old version prefixes, so one prefix covers both.
const apiPrefix = "/v4.0.0/libpod"

// Client is a libpod REST client over a unix socket, TCP or ssh; it is safe
// for concurrent use.
type Client struct {
	endpoint Endpoint
	dialer   dialer
	http     *http.Client
}

// NewClient returns a client for the socket path (a "unix://" prefix is
// accepted). It does not dial.
func NewClient(socket string) *Client {
	socket = strings.TrimPrefix(socket, "unix://")
	return newClient(Endpoint{Scheme: "unix", Path: socket}, netDialer{"unix", socket})
}

// Connect returns a client for any endpoint; ssh needs sc. It does not dial.
func Connect(ep Endpoint, sc SSHConfig) (*Client, error) {
	switch ep.Scheme {
	case "unix":
		return NewClient(ep.Path), nil
	case "tcp":
		return newClient(ep, netDialer{"tcp", ep.Host}), nil
	case "ssh":
		d, err := newSSHDialer(ep, sc)
		if err != nil {
			return nil, err
		}
		return newClient(ep, d), nil
	default:
		return nil, fmt.Errorf("podman endpoint %q: unknown scheme", ep.Scheme)
	}
}

func newClient(ep Endpoint, d dialer) *Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return d.DialContext(ctx) },
		// A fresh dial per request costs microseconds on a unix socket and
		// means a restarted podman service is picked up without stale
		// keep-alive connections failing the next non-idempotent POST.
		DisableKeepAlives: true,
	}
	return &Client{endpoint: ep, dialer: d, http: &http.Client{Transport: tr}}
}

// Socket is the local socket path the client dials ("" when it is remote).
func (c *Client) Socket() string {
	if c.endpoint.Local() {
		return c.endpoint.Path
	}
	return ""
}

// Endpoint is where the client connects.
func (c *Client) Endpoint() Endpoint { return c.endpoint }

// Close ends a connection the client keeps (ssh); requests fail afterwards.
func (c *Client) Close() error { return c.dialer.Close() }

// APIError is an error answer from podman, carrying its own words.
type APIError struct {
	Status  int
	Cause   string
	Message string
	Op      string
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = e.Cause
	}
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	return fmt.Sprintf("podman %s: %s (HTTP %d)", e.Op, msg, e.Status)
}

// Is lets errors.Is(err, runtime.ErrNotFound) work for 404 answers.
func (e *APIError) Is(target error) bool {
	if target != runtime.ErrNotFound {
		return false
	}
	// podman 4.3 answers 500 "no such container/pod" for an object removed
	// while it was being inspected.
	return e.Status == http.StatusNotFound ||
		(e.Status == http.StatusInternalServerError && strings.Contains(e.Message+e.Cause, "no such "))
}

// request describes one API call.
type request struct {
	method string
	path   string // below apiPrefix, already escaped where needed
	query  url.Values
	body   any
	// raw, instead of body, is sent as it is (an image archive).
	raw    io.Reader
	header http.Header
}

func (r request) url() string {
	u := "http://podman" + apiPrefix + r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	return u
}

// send performs the call and returns the response when the status is below
// 400; otherwise the body is decoded into an *APIError.
func (c *Client) send(ctx context.Context, r request) (*http.Response, error) {
	body := r.raw
	if r.body != nil {
		b, err := json.Marshal(r.body)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, r.url(), body)
	if err != nil {
		return nil, err
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err == nil && resp.StatusCode >= 400 {
		defer resp.Body.Close()
		resp, err = nil, decodeAPIError(resp, r.method+" "+r.path)
	} else if err != nil {
		err = fmt.Errorf("podman %s %s: %w", r.method, r.path, err)
	}
	return resp, err
}

func decodeAPIError(resp *http.Response, op string) error {
	e := &APIError{Status: resp.StatusCode, Op: op}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var j struct {
		Cause   string   `json:"cause"`
		Message string   `json:"message"`
		Errs    []string `json:"Errs"` // a pod start's report: 409 with why each container did not start
	}
	if json.Unmarshal(b, &j) == nil {
		e.Cause, e.Message = j.Cause, j.Message
		if e.Message == "" && len(j.Errs) > 0 {
			e.Message = strings.Join(j.Errs, "; ")
		}
	} else {
		e.Message = strings.TrimSpace(string(b))
	}
	return e
}

// do performs the call and decodes a JSON answer into out (when non-nil).
func (c *Client) do(ctx context.Context, r request, out any) error {
	resp, err := c.send(ctx, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("podman %s %s: decoding answer: %w", r.method, r.path, err)
	}
	return nil
}

// Ping checks the service answers and returns its libpod API version.
func (c *Client) Ping(ctx context.Context) (string, error) {
	resp, err := c.send(ctx, request{method: http.MethodGet, path: "/_ping"})
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	v := resp.Header.Get("Libpod-Api-Version")
	if v == "" {
		return "", errors.New("podman _ping: no Libpod-Api-Version header: not a podman service")
	}
	return v, nil
}

// WaitReady pings until the service answers or the timeout passes; a
// failure that retrying cannot mend (an ssh host key or login refused)
// ends it at once.
func (c *Client) WaitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := c.Ping(pctx)
		cancel()
		if err == nil {
			return nil
		}
		var permanent permanentError
		if errors.As(err, &permanent) {
			return fmt.Errorf("podman service at %s: %w", c.endpoint, err)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("podman service at %s not ready after %s: %w", c.endpoint, timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// escapeRef keeps the slashes of an image reference (the libpod router
// matches them) while escaping everything else.
func escapeRef(ref string) string {
	parts := strings.Split(ref, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}
