package libpod

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// EventStream opens GET /events for the container events named in actions
// ("start", "died", ...) of the containers that carry label ("k=v"), since
// the given time: one JSON Event per line. The caller closes it.
func (c *Client) EventStream(ctx context.Context, since time.Time, label string, actions []string) (io.ReadCloser, error) {
	f, _ := json.Marshal(map[string][]string{"type": {"container"}, "event": actions, "label": {label}})
	q := url.Values{"stream": {"true"}, "since": {strconv.FormatInt(since.Unix(), 10)}, "filters": {string(f)}}
	resp, err := c.send(ctx, request{method: http.MethodGet, path: "/events", query: q})
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}
