package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/runlet/runlet/internal/nodeshutdown"
)

func TestShutdownGracePeriodsFromTheConfigFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, body string
		want       []nodeshutdown.ByPodPriority
	}{
		{"off by default", "maxPods: 5\n", nil},
		{"regular and critical", "shutdownGracePeriod: 30s\nshutdownGracePeriodCriticalPods: 10s\n",
			[]nodeshutdown.ByPodPriority{{Priority: 0, ShutdownGracePeriodSeconds: 20}, {Priority: 2000000000, ShutdownGracePeriodSeconds: 10}}},
		{"by pod priority", "shutdownGracePeriodByPodPriority: [{priority: 100000, shutdownGracePeriodSeconds: 5}, {priority: 0, shutdownGracePeriodSeconds: 20}]\n",
			[]nodeshutdown.ByPodPriority{{Priority: 0, ShutdownGracePeriodSeconds: 20}, {Priority: 100000, ShutdownGracePeriodSeconds: 5}}},
	} {
		o, err := parseFlags([]string{"--nodename", "n", "--config", writeConfig(t, dir, "c.yaml", tc.body)})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := o.shutdownPeriods(); !reflect.DeepEqual(got, tc.want) || len(o.warnings) != 0 {
			t.Errorf("%s: periods %v, warnings %q; want %v and none", tc.name, got, o.warnings, tc.want)
		}
	}
}

func TestBadShutdownGracePeriodIsRefusedNamingTheField(t *testing.T) {
	dir := t.TempDir()
	for body, want := range map[string]string{
		"shutdownGracePeriod: 500ms\n":                                     "shutdownGracePeriod: 500ms must be either zero or otherwise >= 1 sec",
		"shutdownGracePeriod: -1s\n":                                       "shutdownGracePeriod: -1s must be either zero or otherwise >= 1 sec",
		"shutdownGracePeriod: 10s\nshutdownGracePeriodCriticalPods: 20s\n": "shutdownGracePeriodCriticalPods: 20s must be <= shutdownGracePeriod 10s",
		"shutdownGracePeriod: 10s\nshutdownGracePeriodByPodPriority: [{priority: 0, shutdownGracePeriodSeconds: 5}]\n": "shutdownGracePeriodByPodPriority: cannot be set with shutdownGracePeriod",
		"shutdownGracePeriodByPodPriority: [{priority: 0, shutdownGracePeriodSeconds: -5}]\n":                          "shutdownGracePeriodByPodPriority: [0]: shutdownGracePeriodSeconds must not be negative",
	} {
		file := writeConfig(t, dir, "bad.yaml", body)
		_, err := parseFlags([]string{"--nodename", "n", "--config", file})
		if err == nil || !strings.HasPrefix(err.Error(), "--config "+file+": "+want) {
			t.Errorf("%q: error %v; want %q", body, err, want)
		}
	}
}

func TestShutdownCommandWithoutRunletFails(t *testing.T) {
	if code := shutdownMain([]string{"--root-dir", t.TempDir()}); code != 1 {
		t.Errorf("runlet shutdown with no runlet exited %d; want 1", code)
	}
	if code := shutdownMain([]string{"--timeout=-1s"}); code != 2 {
		t.Errorf("runlet shutdown --timeout=-1s exited %d; want 2", code)
	}
}
