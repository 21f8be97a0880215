package containerlog

import (
	"bytes"
	"errors"
	"fmt"
	"time"
)

// timeFormatOut is the kubelet's fixed-width timestamp for --timestamps
// output; the lenient form parses what conmon writes ("+00:00" zones and
// trailing zeros dropped).
const (
	timeFormatOut = "2006-01-02T15:04:05.000000000Z07:00"
	timeFormatIn  = "2006-01-02T15:04:05.999999999Z07:00"
)

// Stream names as they appear in the file.
const (
	Stdout = "stdout"
	Stderr = "stderr"
)

// message is one parsed line of the file.
type message struct {
	timestamp time.Time
	stream    string
	// log is the content; a full line keeps its newline, a partial one has none.
	log []byte
}

var errMalformed = errors.New("malformed log line")

// parseLine parses "<time> <stream> <tag> <content>\n". The tag is P for a
// partial line (its trailing newline is the file's, not the content's) or F.
func parseLine(line []byte, msg *message) error {
	ts, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok {
		return fmt.Errorf("%w: no timestamp", errMalformed)
	}
	t, err := time.Parse(timeFormatIn, string(ts))
	if err != nil {
		return fmt.Errorf("%w: timestamp %q", errMalformed, ts)
	}
	stream, rest, ok := bytes.Cut(rest, []byte{' '})
	if !ok || (string(stream) != Stdout && string(stream) != Stderr) {
		return fmt.Errorf("%w: stream %q", errMalformed, stream)
	}
	tag, content, ok := bytes.Cut(rest, []byte{' '})
	if !ok {
		return fmt.Errorf("%w: no tag", errMalformed)
	}
	// Tags may carry more fields after ':' (forward compatibility, as in CRI).
	tag, _, _ = bytes.Cut(tag, []byte{':'})
	if string(tag) == "P" {
		content = bytes.TrimSuffix(content, []byte{'\n'})
	}
	msg.timestamp, msg.stream, msg.log = t, string(stream), content
	return nil
}
