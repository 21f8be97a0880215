// Package logging carries runlet's one log stream, logrus, to the libraries
// that log through logr (client-go's certificate manager, klog's contextual
// logging).
package logging

import (
	"fmt"

	"github.com/go-logr/logr"
	"github.com/sirupsen/logrus"
)

// Logr is a logr.Logger that writes to entry. logr's verbosity maps onto
// logrus's levels as klog's does onto the kubelet's: V(0) is info, V(1) and
// more are debug, so that --log-level governs both.
func Logr(entry *logrus.Entry) logr.Logger {
	return logr.New(&sink{entry: entry})
}

type sink struct {
	entry *logrus.Entry
	name  string
}

func (s *sink) Init(logr.RuntimeInfo) {}

func (s *sink) Enabled(level int) bool {
	if level > 0 {
		return s.entry.Logger.IsLevelEnabled(logrus.DebugLevel)
	}
	return s.entry.Logger.IsLevelEnabled(logrus.InfoLevel)
}

func (s *sink) Info(level int, msg string, kv ...any) {
	e := s.with(kv)
	if level > 0 {
		e.Debug(msg)
		return
	}
	e.Info(msg)
}

func (s *sink) Error(err error, msg string, kv ...any) {
	s.with(kv).WithError(err).Error(msg)
}

func (s *sink) WithValues(kv ...any) logr.LogSink {
	return &sink{entry: s.with(kv), name: s.name}
}

func (s *sink) WithName(name string) logr.LogSink {
	if s.name != "" {
		name = s.name + "/" + name
	}
	return &sink{entry: s.entry.WithField("logger", name), name: name}
}

// with adds logr's key/value pairs as logrus fields; a key that is not a
// string (a caller's mistake) is kept under its printed form.
func (s *sink) with(kv []any) *logrus.Entry {
	if len(kv) == 0 {
		return s.entry
	}
	f := make(logrus.Fields, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		k, ok := kv[i].(string)
		if !ok {
			k = fmt.Sprint(kv[i])
		}
		f[k] = kv[i+1]
	}
	return s.entry.WithFields(f)
}
