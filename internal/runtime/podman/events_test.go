package podman

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
)

func eventLine(id, action string, at time.Time, managed bool) map[string]any {
	attrs := map[string]string{"name": id, runtime.LabelPodUID: "uid-" + id}
	if managed {
		attrs[runtime.LabelManaged] = "true"
	}
	return map[string]any{"Type": "container", "Action": action, "Actor": map[string]any{"ID": id, "Attributes": attrs},
		"time": at.Unix(), "timeNano": at.UnixNano()}
}

func TestEventsDropReplayAndUnmanaged(t *testing.T) {
	f := newFakePodman(t)
	f.handle("GET /events", func(w http.ResponseWriter, r *http.Request) {
		enc := json.NewEncoder(w)
		now := time.Now()
		// A rotation replay: old events first, then fresh ones.
		for i := 0; i < 50; i++ {
			_ = enc.Encode(eventLine("old"+strconv.Itoa(i), "died", now.Add(-time.Hour), true))
		}
		_ = enc.Encode(eventLine("stranger", "start", now.Add(time.Millisecond), false))
		_ = enc.Encode(eventLine("c1", "cleanup", now.Add(time.Millisecond), true))
		_ = enc.Encode(eventLine("c1", "died", now.Add(time.Millisecond), true))
		w.(http.Flusher).Flush()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ch, err := f.backend().Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []runtime.Event
	for ev := range ch {
		got = append(got, ev)
	}
	if len(got) != 1 || got[0].ContainerID != "c1" || got[0].PodUID != "uid-c1" || got[0].Action != "died" {
		t.Errorf("events = %+v; want only c1's fresh died", got)
	}
	q := f.sent("GET /events")[0].Query
	if q.Get("stream") != "true" || q.Get("filters") != `{"event":["start","died","remove"],"label":["io.runlet.managed=true"],"type":["container"]}` || q.Get("since") == "" {
		t.Errorf("events query = %v", q)
	}
}

// TestEventsOfOtherNodes: with an owner, the stream asks podman for this
// node's containers only and drops any other node's event that comes anyway.
func TestEventsOfOtherNodes(t *testing.T) {
	f := newFakePodman(t)
	f.handle("GET /events", func(w http.ResponseWriter, r *http.Request) {
		enc := json.NewEncoder(w)
		now := time.Now().Add(time.Millisecond)
		for _, owner := range []string{"other-node", "node-1", ""} {
			ev := eventLine("c-"+owner, "died", now, true)
			if owner != "" {
				ev["Actor"].(map[string]any)["Attributes"].(map[string]string)[runtime.LabelOwner] = owner
			}
			_ = enc.Encode(ev)
		}
		w.(http.Flusher).Flush()
	})
	b := f.backend()
	b.opts.Owner = "node-1"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ch, err := b.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for ev := range ch {
		got = append(got, ev.ContainerID)
	}
	if len(got) != 1 || got[0] != "c-node-1" {
		t.Errorf("events of %v; want only node-1's", got)
	}
	if q := f.sent("GET /events")[0].Query; !strings.Contains(q.Get("filters"), `"label":["io.runlet.owner=node-1"]`) {
		t.Errorf("events filters = %s", q.Get("filters"))
	}
}

func TestEventsStopWithContext(t *testing.T) {
	f := newFakePodman(t)
	f.handle("GET /events", func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := f.backend().Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case _, ok := <-ch:
		if ok {
			t.Error("unexpected event")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("event channel not closed after cancel")
	}
}
