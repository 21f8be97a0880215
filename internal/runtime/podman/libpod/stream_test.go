package libpod

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/runlet/runlet/internal/runtime/podman/libpod/libpodtest"
)

func TestDemux(t *testing.T) {
	var in bytes.Buffer
	in.Write(libpodtest.Frame(streamStdout, "out1\n"))
	in.Write(libpodtest.Frame(streamStderr, "err1\n"))
	in.Write(libpodtest.Frame(streamStdout, ""))
	in.Write(libpodtest.Frame(streamStdout, "out2\n"))
	var out, errb bytes.Buffer
	if err := Demux(&in, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if out.String() != "out1\nout2\n" || errb.String() != "err1\n" {
		t.Errorf("stdout %q stderr %q", out.String(), errb.String())
	}
	if err := Demux(strings.NewReader("plain text, not frames"), io.Discard, io.Discard); err == nil {
		t.Error("Demux accepted a stream without frame headers")
	}
	if err := Demux(bytes.NewReader(libpodtest.Frame(streamStdout, "cut short")[:10]), io.Discard, io.Discard); err == nil {
		t.Error("Demux accepted a truncated frame")
	}
}
