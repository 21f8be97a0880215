package logging

import (
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/sirupsen/logrus"
	"k8s.io/klog/v2"
)

// Formats are the values of --logging-format, as the kubelet's.
var Formats = []string{"text", "json"}

// timestampFormat keeps microseconds, as klog's lines do.
const timestampFormat = "2006-01-02T15:04:05.000000Z07:00"

// New is runlet's one log stream: logrus at level, as text or JSON (for log
// collectors), on w. klog, which client-go and the kubelet code runlet
// carries log through, is routed into it too, so --log-level governs both
// and a JSON consumer never meets a klog header line.
func New(level, format string, w io.Writer) (*logrus.Entry, error) {
	lv, err := logrus.ParseLevel(level)
	if err != nil {
		return nil, fmt.Errorf("--log-level %q is not one of debug, info, warn, error", level)
	}
	l := logrus.New()
	l.SetOutput(w)
	l.SetLevel(lv)
	switch format {
	case "text":
		l.SetFormatter(&logrus.TextFormatter{FullTimestamp: true, TimestampFormat: timestampFormat})
	case "json":
		l.SetFormatter(&logrus.JSONFormatter{TimestampFormat: timestampFormat})
	default:
		return nil, fmt.Errorf("--logging-format %q is not one of %v", format, Formats)
	}
	entry := logrus.NewEntry(l)
	routeKlog(entry, lv)
	return entry, nil
}

// routeKlog sends klog's output to entry. klog decides V(n) itself, by its
// -v: 0 (its errors, warnings and plain infos) unless runlet logs at debug,
// when the libraries' V(2) details are wanted too.
func routeKlog(entry *logrus.Entry, lv logrus.Level) {
	klog.SetLogger(Logr(entry.WithField("logger", "klog")))
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	v := 0
	if lv >= logrus.DebugLevel {
		v = 2
	}
	_ = fs.Set("v", strconv.Itoa(v))
}
