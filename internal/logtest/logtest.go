// Package logtest gives tests a logger that writes nowhere, so that a test's
// output holds only what the test itself reports.
package logtest

import (
	"io"

	"github.com/sirupsen/logrus"
)

// Discard is a logger at debug level whose output is dropped: the code under
// test runs every log call, formatting included, without printing it.
func Discard() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	l.SetLevel(logrus.DebugLevel)
	return l
}
