package libpod

import (
	"bytes"
	"io"
	"net/http"
	"testing"
)

// FuzzDecodeAnswers: whatever podman (or something in its place) answers to
// a pull or with an error, the client decodes it into an image ID or an
// error, and never panics.
func FuzzDecodeAnswers(f *testing.F) {
	f.Add([]byte(`{"stream":"Trying"}{"error":"manifest unknown"}`))
	f.Add([]byte(`{"images":["sha256:abc"],"id":"abc"}`))
	f.Add([]byte(`{"cause":"no such container","message":"no container with name or ID x","response":404}`))
	f.Add([]byte(`{"Id":"pod1","Errs":["starting container x: bind: address already in use"]}`))
	f.Add([]byte("\x00[{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if id, err := readPullStream("img", bytes.NewReader(data)); err == nil && id == "" {
			t.Fatal("a pull reported neither an image nor an error")
		}
		resp := &http.Response{StatusCode: 500, Body: io.NopCloser(bytes.NewReader(data))}
		if err := decodeAPIError(resp, "GET /x"); err == nil {
			t.Fatal("an error answer decoded to no error")
		}
	})
}
