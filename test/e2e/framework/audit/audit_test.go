package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func line(user, agent, verb, res, name string, code int, msg string) string {
	return `{"stage":"ResponseComplete","stageTimestamp":"t","verb":"` + verb + `","user":{"username":"` + user + `"},"userAgent":"` + agent +
		`","objectRef":{"resource":"` + res + `","namespace":"ns","name":"` + name + `"},"responseStatus":{"code":` +
		map[int]string{200: "200", 403: "403"}[code] + `,"message":"` + msg + `"}}`
}

// A refusal stands unless the same node later reads the same object; refusals of other agents,
// of users that are not nodes and of new content in a terminating namespace do not count.
func TestRunletDenials(t *testing.T) {
	dir := t.TempDir()
	node, rl := "system:node:n1", "runlet/v1"
	old := []string{
		line(node, rl, "get", "persistentvolumeclaims", "data", 403, "no relationship found"),
		line(node, rl, "get", "secrets", "other", 403, "no relationship found"),
	}
	cur := []string{
		line(node, rl, "get", "persistentvolumeclaims", "data", 200, ""),
		line(node, "kubectl/v1", "list", "secrets", "", 403, "cannot list"),
		line("admin", rl, "list", "secrets", "", 403, "cannot list"),
		line(node, rl, "create", "events", "e1", 403, "unable to create new content in namespace ns because it is being terminated"),
		`{"stage":"ResponseStarted","verb":"watch","user":{"username":"` + node + `"},"userAgent":"runlet/v1"}`,
	}
	for name, lines := range map[string][]string{"audit-2026-01-01T00-00-00.000.log": old, "audit.log": cur} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Runlet(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests != 4 {
		t.Errorf("requests = %d, want 4 (runlet's, as a node, complete)", s.Requests)
	}
	if len(s.Denials) != 1 || !strings.Contains(s.Denials[0], "secrets ns/other") {
		t.Errorf("denials = %q, want the secret's alone", s.Denials)
	}
	if len(s.Transient) != 1 || !strings.Contains(s.Transient[0], "persistentvolumeclaims ns/data") {
		t.Errorf("transient = %q, want the claim's", s.Transient)
	}
	if _, err := Runlet(t.TempDir()); err == nil {
		t.Error("no audit log: want an error")
	}
}
