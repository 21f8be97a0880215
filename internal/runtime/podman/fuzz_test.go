package podman

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
)

// FuzzDecodeAnswers: whatever podman (or something in its place) answers to
// a container list or in an event stream, the backend turns it into the
// contract's containers and events, and never panics.
func FuzzDecodeAnswers(f *testing.F) {
	f.Add([]byte(`[{"Id":"c1","Names":["x"],"State":"running","StartedAt":1700000000,"ExitedAt":-62135596800,` +
		`"Labels":{"io.runlet.managed":"true","io.runlet.container.attempt":"2"},"Pod":"p1","IsInfra":false}]`))
	f.Add([]byte(`{"Type":"container","Action":"died","Actor":{"ID":"c1","Attributes":{"io.runlet.managed":"true",` +
		`"io.runlet.pod.uid":"u1"}},"time":1700000000,"timeNano":1700000000000000000}` + "\n" + `{"Type":"image"}`))
	f.Add([]byte("\x00[{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var list []libpod.ListContainer
		if json.Unmarshal(data, &list) == nil {
			for _, lc := range list {
				c := fromList(lc)
				if c.ID != lc.ID || c.Labels == nil && lc.Labels != nil {
					t.Fatalf("container %q lost its identity", lc.ID)
				}
			}
		}
		ch := make(chan runtime.Event, 1024)
		pumpEvents(context.Background(), json.NewDecoder(io.LimitReader(bytes.NewReader(data), 1<<20)), time.Unix(0, 0), "", ch)
		close(ch)
		for ev := range ch {
			if ev.ContainerID == "" && ev.PodUID == "" {
				t.Fatalf("event without a container or pod: %+v", ev)
			}
		}
	})
}
