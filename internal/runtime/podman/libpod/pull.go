package libpod

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// RegistryAuth is what podman's X-Registry-Auth header carries.
type RegistryAuth struct {
	Username      string `json:"username,omitempty"`
	Password      string `json:"password,omitempty"`
	ServerAddress string `json:"serveraddress,omitempty"`
}

// PullError is a pull that podman reported inside a 200 answer.
type PullError struct {
	Ref     string
	Message string
}

func (e *PullError) Error() string { return fmt.Sprintf("pulling %s: %s", e.Ref, e.Message) }

// Pull pulls ref and returns the image ID. podman answers 200 before it knows
// the outcome, so failures arrive as {"error": ...} inside the streamed body.
// insecure lets the pull use plain HTTP and skip certificate checks.
func (c *Client) Pull(ctx context.Context, ref string, auth *RegistryAuth, insecure bool) (string, error) {
	r := request{
		method: http.MethodPost,
		path:   "/images/pull",
		query:  url.Values{"reference": {ref}, "policy": {"always"}, "quiet": {"true"}},
	}
	if insecure {
		r.query.Set("tlsVerify", "false")
	}
	if auth != nil {
		b, _ := json.Marshal(auth)
		r.header = http.Header{"X-Registry-Auth": {base64.URLEncoding.EncodeToString(b)}}
	}
	resp, err := c.send(ctx, r)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	return readPullStream(ref, resp.Body)
}

func readPullStream(ref string, body io.Reader) (string, error) {
	dec := json.NewDecoder(body)
	id := ""
	for {
		var m struct {
			Error  string   `json:"error"`
			ID     string   `json:"id"`
			Images []string `json:"images"`
		}
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("pulling %s: reading answer: %w", ref, err)
		}
		if m.Error != "" {
			return "", &PullError{Ref: ref, Message: m.Error}
		}
		if m.ID != "" {
			id = m.ID
		} else if len(m.Images) > 0 {
			id = m.Images[0]
		}
	}
	if id == "" {
		return "", &PullError{Ref: ref, Message: "podman reported neither an image nor an error"}
	}
	return id, nil
}
