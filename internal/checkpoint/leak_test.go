package checkpoint

import (
	"testing"

	"github.com/runlet/runlet/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.Main(m) }
