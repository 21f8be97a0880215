package podman

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/runlet/runlet/internal/runtime"
	"github.com/runlet/runlet/internal/runtime/podman/libpod"
	"github.com/runlet/runlet/internal/runtime/podman/libpod/libpodtest"
)

func TestLogsQueryAndLimit(t *testing.T) {
	f := newFakePodman(t)
	f.handle("GET /containers/c1/logs", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(libpodtest.Frame(libpodtest.Stdout, "hello\n"))
		_, _ = w.Write(libpodtest.Frame(libpodtest.Stderr, "world\n"))
	})
	b := f.backend()
	since := time.Unix(1700000000, 5)
	var out, errb bytes.Buffer
	err := b.Logs(context.Background(), "c1", runtime.LogOptions{Follow: true, Timestamps: true, TailLines: 10, Since: since, LimitBytes: 8}, &out, &errb)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != "hello\n" || errb.String() != "wo" {
		t.Errorf("stdout %q stderr %q; want the first 8 bytes across both", out.String(), errb.String())
	}
	q := f.sent("GET /containers/c1/logs")[0].Query
	want := map[string]string{"follow": "true", "timestamps": "true", "tail": "10", "since": "1700000000.000000005", "stdout": "true", "stderr": "true"}
	for k, v := range want {
		if q.Get(k) != v {
			t.Errorf("query %s = %q; want %q", k, q.Get(k), v)
		}
	}
	_ = b.Logs(context.Background(), "c1", runtime.LogOptions{TailLines: -1}, io.Discard, io.Discard)
	if q := f.sent("GET /containers/c1/logs")[1].Query; q.Has("tail") || q.Has("since") {
		t.Errorf("query %v; want no tail and no since for 'everything'", q)
	}
}

func TestExecStdinEOFAndExitCodeRetry(t *testing.T) {
	f := newFakePodman(t)
	f.json("POST /containers/c1/exec", 201, map[string]any{"Id": "e1"})
	f.handle("POST /exec/e1/start", libpodtest.EchoExec(t))
	calls := 0
	f.handle("GET /exec/e1/json", func(w http.ResponseWriter, r *http.Request) {
		calls++
		_ = json.NewEncoder(w).Encode(map[string]any{"ID": "e1", "Running": calls < 3, "ExitCode": 7})
	})
	var out, errb bytes.Buffer
	code, err := f.backend().Exec(context.Background(), "c1", []string{"sh", "-c", "cat; exit 7"},
		runtime.StreamIO{Stdin: strings.NewReader("abc"), Stdout: &out, Stderr: &errb})
	if err != nil || code != 7 {
		t.Fatalf("Exec = %d, %v; want 7", code, err)
	}
	if out.String() != "got:abc" || errb.String() != "eof seen\n" {
		t.Errorf("stdout %q stderr %q", out.String(), errb.String())
	}
	if calls != 3 {
		t.Errorf("exec inspected %d times; want 3 (retry while Running)", calls)
	}
	var cfg libpod.ExecConfig
	_ = json.Unmarshal(f.sent("POST /containers/c1/exec")[0].Body, &cfg)
	if !cfg.AttachStdin || !cfg.AttachStdout || !cfg.AttachStderr || cfg.Tty || len(cfg.Cmd) != 3 {
		t.Errorf("exec config = %+v", cfg)
	}
}

func TestExecResizeTTY(t *testing.T) {
	f := newFakePodman(t)
	f.json("POST /containers/c1/exec", 201, map[string]any{"Id": "e1"})
	f.handle("POST /exec/e1/start", func(w http.ResponseWriter, r *http.Request) {
		conn, buf, _ := w.(http.Hijacker).Hijack()
		defer conn.Close()
		_, _ = buf.WriteString("HTTP/1.1 101 UPGRADED\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\nraw tty output")
		_ = buf.Flush()
		time.Sleep(100 * time.Millisecond) // let the resize arrive
	})
	f.json("POST /exec/e1/resize", 201, nil)
	f.json("GET /exec/e1/json", 200, map[string]any{"Running": false, "ExitCode": 0})
	sizes := make(chan runtime.TermSize, 1)
	sizes <- runtime.TermSize{Width: 80, Height: 24}
	var out bytes.Buffer
	code, err := f.backend().Exec(context.Background(), "c1", []string{"sh"}, runtime.StreamIO{Stdout: &out, TTY: true, Resize: sizes})
	if err != nil || code != 0 || out.String() != "raw tty output" {
		t.Fatalf("Exec = %d, %v, %q", code, err, out.String())
	}
	r := f.sent("POST /exec/e1/resize")
	if len(r) != 1 || r[0].Query.Get("w") != "80" || r[0].Query.Get("h") != "24" {
		t.Errorf("resize requests = %+v", r)
	}
}

func TestExecStartErrorCarriesMessage(t *testing.T) {
	f := newFakePodman(t)
	f.json("POST /containers/c1/exec", 201, map[string]any{"Id": "e1"})
	f.json("POST /exec/e1/start", 409, map[string]any{"cause": "container state improper", "message": "container c1 is not running"})
	_, err := f.backend().Exec(context.Background(), "c1", []string{"true"}, runtime.StreamIO{})
	if err == nil || !strings.Contains(err.Error(), "container c1 is not running") {
		t.Errorf("err = %v; want podman's message", err)
	}
}

func TestStatsFallsBackOneByOne(t *testing.T) {
	f := newFakePodman(t)
	f.handle("GET /containers/stats", func(w http.ResponseWriter, r *http.Request) {
		ids := r.URL.Query()["containers"]
		if len(ids) > 1 || ids[0] == "dead" {
			w.WriteHeader(409)
			_, _ = fmt.Fprint(w, `{"cause":"container state improper","message":"container dead is not running"}`)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"Error": nil, "Stats": []any{map[string]any{
			"ContainerID": ids[0], "CPUNano": 5, "MemUsage": 6, "MemLimit": 7, "NetInput": 8, "NetOutput": 9, "PIDs": 1}}})
	})
	st, err := f.backend().Stats(context.Background(), []string{"live", "dead"})
	if err != nil || len(st) != 1 || st[0].ID != "live" || st[0].CPUNanos != 5 || st[0].MemoryWorkingSet != 6 || st[0].NetTxBytes != 9 {
		t.Errorf("Stats = %+v, %v; want the live container only", st, err)
	}
}
