package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
)

// lines decodes buf's JSON log lines.
func lines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if l == "" {
			continue
		}
		m := map[string]any{}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q (%v)", l, err)
		}
		out = append(out, m)
	}
	return out
}

// A warning client-go logs through klog (here, an apiserver's Warning
// header) arrives in runlet's JSON stream as one JSON line, and klog's V(2)
// details only at --log-level=debug.
func TestKlogJoinsTheJSONStream(t *testing.T) {
	var buf bytes.Buffer
	if _, err := New("info", "json", &buf); err != nil {
		t.Fatal(err)
	}
	rest.WarningLogger{}.HandleWarningHeader(299, "", "pods are deprecated in this test")
	klog.V(2).Info("a library's detail")
	klog.Flush()
	got := lines(t, &buf)
	if len(got) != 1 || !strings.Contains(got[0]["msg"].(string), "pods are deprecated in this test") || got[0]["logger"] != "klog" {
		t.Fatalf("want the client-go warning alone, as JSON from klog; got %v", got)
	}

	buf.Reset()
	if _, err := New("debug", "json", &buf); err != nil {
		t.Fatal(err)
	}
	klog.V(2).Info("a library's detail")
	klog.Flush()
	if got := lines(t, &buf); len(got) != 1 || got[0]["msg"] != "a library's detail" || got[0]["level"] != "debug" {
		t.Errorf("at debug, want klog's V(2) line as a debug line; got %v", got)
	}
}

// logr's key/value pairs become fields; its errors, errors.
func TestLogrFields(t *testing.T) {
	var buf bytes.Buffer
	entry, err := New("info", "json", &buf)
	if err != nil {
		t.Fatal(err)
	}
	l := Logr(entry).WithName("cert").WithValues("node", "n1")
	l.Info("asked", "csr", "csr-1")
	l.V(1).Info("hidden at info")
	l.Error(errors.New("denied"), "not signed")
	got := lines(t, &buf)
	if len(got) != 2 {
		t.Fatalf("want 2 lines, got %v", got)
	}
	if got[0]["logger"] != "cert" || got[0]["node"] != "n1" || got[0]["csr"] != "csr-1" || got[0]["level"] != "info" {
		t.Errorf("info line %v", got[0])
	}
	if got[1]["level"] != "error" || got[1]["error"] != "denied" {
		t.Errorf("error line %v", got[1])
	}
}

func TestNewRefusesBadValues(t *testing.T) {
	if _, err := New("loud", "text", &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "--log-level") {
		t.Errorf("bad level: %v", err)
	}
	if _, err := New("info", "xml", &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "--logging-format") {
		t.Errorf("bad format: %v", err)
	}
}
