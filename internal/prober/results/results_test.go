package results

import "testing"

func TestSetSendsOnlyChanges(t *testing.T) {
	m := NewManager()
	if _, ok := m.Get("c1"); ok {
		t.Fatal("result before any probe")
	}
	m.Set("c1", Failure, "pod")
	m.Set("c1", Failure, "pod")
	m.Set("c1", Success, "pod")
	if got := len(m.Updates()); got != 2 {
		t.Fatalf("updates: got %d, want 2", got)
	}
	if u := <-m.Updates(); u.Result != Failure || u.ContainerID != "c1" || u.PodUID != "pod" {
		t.Fatalf("first update %+v", u)
	}
	if r, ok := m.Get("c1"); !ok || r != Success {
		t.Fatalf("got %v %v", r, ok)
	}
	m.Remove("c1")
	if _, ok := m.Get("c1"); ok {
		t.Fatal("result after Remove")
	}
}
