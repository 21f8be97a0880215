// Package e2e holds runlet's end-to-end tests: a real control plane, real
// podman and the runlet binary, all started on 127.0.0.1 by the framework.
package e2e

import (
	"testing"

	"github.com/runlet/runlet/test/e2e/framework"
)

func TestMain(m *testing.M) { framework.Main(m) }
