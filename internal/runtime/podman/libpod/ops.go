package libpod

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/opencontainers/runtime-spec/specs-go"
)

type idAnswer struct {
	ID string `json:"Id"`
}

// Info returns the host and version report of the service.
func (c *Client) Info(ctx context.Context) (Info, error) {
	var info Info
	err := c.do(ctx, request{method: http.MethodGet, path: "/info"}, &info)
	return info, err
}

// CreatePod creates a pod and returns its ID.
func (c *Client) CreatePod(ctx context.Context, spec PodSpec) (string, error) {
	var out idAnswer
	err := c.do(ctx, request{method: http.MethodPost, path: "/pods/create", body: spec}, &out)
	return out.ID, err
}

// StartPod starts the pod's containers (only the infra one right after create).
func (c *Client) StartPod(ctx context.Context, id string) error {
	var out struct {
		Errs []string `json:"Errs"`
	}
	err := c.do(ctx, request{method: http.MethodPost, path: "/pods/" + url.PathEscape(id) + "/start"}, &out)
	if err == nil && len(out.Errs) > 0 {
		// podman answers 200 with per-container errors; surface the first.
		return &APIError{Status: http.StatusInternalServerError, Op: "POST /pods/start", Message: out.Errs[0]}
	}
	return err
}

// RemovePod force-removes a pod and its containers. timeout=0 skips podman's
// 10 s grace for processes that ignore SIGTERM: runlet stops with grace itself.
func (c *Client) RemovePod(ctx context.Context, id string) error {
	q := url.Values{"force": {"true"}, "timeout": {"0"}}
	return c.do(ctx, request{method: http.MethodDelete, path: "/pods/" + url.PathEscape(id), query: q}, nil)
}

// ListPods lists pods matching the label filters ("k=v").
func (c *Client) ListPods(ctx context.Context, labels ...string) ([]ListPod, error) {
	var out []ListPod
	err := c.do(ctx, request{method: http.MethodGet, path: "/pods/json", query: labelFilter(labels)}, &out)
	return out, err
}

// InspectPod returns a pod's inspect report.
func (c *Client) InspectPod(ctx context.Context, id string) (InspectPod, error) {
	var out InspectPod
	err := c.do(ctx, request{method: http.MethodGet, path: "/pods/" + url.PathEscape(id) + "/json"}, &out)
	return out, err
}

// CreateContainer creates a container and returns its ID.
func (c *Client) CreateContainer(ctx context.Context, spec ContainerSpec) (string, error) {
	var out idAnswer
	err := c.do(ctx, request{method: http.MethodPost, path: "/containers/create", body: spec}, &out)
	return out.ID, err
}

// StartContainer starts a created or exited container.
func (c *Client) StartContainer(ctx context.Context, id string) error {
	return c.do(ctx, request{method: http.MethodPost, path: "/containers/" + url.PathEscape(id) + "/start"}, nil)
}

// UpdateContainer changes a running container's cgroup settings (podman
// update, libpod API 4.3 and later; the body is the OCI runtime-spec's
// resources).
func (c *Client) UpdateContainer(ctx context.Context, id string, r *specs.LinuxResources) error {
	return c.do(ctx, request{method: http.MethodPost, path: "/containers/" + url.PathEscape(id) + "/update", body: r}, nil)
}

// StopContainer sends the stop signal, then SIGKILL after timeout.
func (c *Client) StopContainer(ctx context.Context, id string, timeout time.Duration) error {
	q := url.Values{"timeout": {strconv.Itoa(int((timeout + time.Second - 1) / time.Second))}}
	return c.do(ctx, request{method: http.MethodPost, path: "/containers/" + url.PathEscape(id) + "/stop", query: q}, nil)
}

// KillContainer sends a signal (e.g. "SIGKILL").
func (c *Client) KillContainer(ctx context.Context, id, signal string) error {
	q := url.Values{"signal": {signal}}
	return c.do(ctx, request{method: http.MethodPost, path: "/containers/" + url.PathEscape(id) + "/kill", query: q}, nil)
}

// RemoveContainer force-removes a container without waiting for a grace.
func (c *Client) RemoveContainer(ctx context.Context, id string) error {
	q := url.Values{"force": {"true"}, "timeout": {"0"}}
	return c.do(ctx, request{method: http.MethodDelete, path: "/containers/" + url.PathEscape(id), query: q}, nil)
}

// ListContainers lists all containers (running or not) matching the label filters.
func (c *Client) ListContainers(ctx context.Context, labels ...string) ([]ListContainer, error) {
	q := labelFilter(labels)
	q.Set("all", "true")
	var out []ListContainer
	err := c.do(ctx, request{method: http.MethodGet, path: "/containers/json", query: q}, &out)
	return out, err
}

// InspectContainer returns a container's inspect report.
func (c *Client) InspectContainer(ctx context.Context, id string) (InspectContainer, error) {
	var out InspectContainer
	err := c.do(ctx, request{method: http.MethodGet, path: "/containers/" + url.PathEscape(id) + "/json"}, &out)
	return out, err
}

// WaitContainer blocks until the container meets condition (e.g. "exited")
// and returns its exit code.
func (c *Client) WaitContainer(ctx context.Context, id, condition string) (int, error) {
	q := url.Values{}
	if condition != "" {
		q.Set("condition", condition)
	}
	var code int
	err := c.do(ctx, request{method: http.MethodPost, path: "/containers/" + url.PathEscape(id) + "/wait", query: q}, &code)
	return code, err
}

// ImageExists reports whether the image is in local storage.
func (c *Client) ImageExists(ctx context.Context, ref string) (bool, error) {
	err := c.do(ctx, request{method: http.MethodGet, path: "/images/" + escapeRef(ref) + "/exists"}, nil)
	if err == nil {
		return true, nil
	}
	if e, ok := err.(*APIError); ok && e.Status == http.StatusNotFound {
		return false, nil
	}
	return false, err
}

// LoadImage loads the images of a docker-archive or OCI-archive tarball
// and returns their names.
func (c *Client) LoadImage(ctx context.Context, archive io.Reader) ([]string, error) {
	var out struct {
		Names []string `json:"Names"`
	}
	r := request{method: http.MethodPost, path: "/images/load", raw: archive,
		header: http.Header{"Content-Type": {"application/x-tar"}}}
	err := c.do(ctx, r, &out)
	return out.Names, err
}

// InspectImage returns an image's ID and config.
func (c *Client) InspectImage(ctx context.Context, ref string) (ImageInspect, error) {
	var out ImageInspect
	err := c.do(ctx, request{method: http.MethodGet, path: "/images/" + escapeRef(ref) + "/json"}, &out)
	return out, err
}

// Stats returns one sample for each container.
func (c *Client) Stats(ctx context.Context, ids []string) ([]Stats, error) {
	q := url.Values{"stream": {"false"}, "containers": ids}
	var out struct {
		Error json.RawMessage `json:"Error"`
		Stats []Stats         `json:"Stats"`
	}
	if err := c.do(ctx, request{method: http.MethodGet, path: "/containers/stats", query: q}, &out); err != nil {
		return nil, err
	}
	if len(out.Error) > 0 && string(out.Error) != "null" {
		return out.Stats, &APIError{Status: http.StatusInternalServerError, Op: "GET /containers/stats", Message: string(out.Error)}
	}
	return out.Stats, nil
}

// labelFilter builds the filters query parameter for "k=v" label filters.
func labelFilter(labels []string) url.Values {
	q := url.Values{}
	if len(labels) == 0 {
		return q
	}
	b, _ := json.Marshal(map[string][]string{"label": labels})
	q.Set("filters", string(b))
	return q
}
