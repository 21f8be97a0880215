package e2e

import (
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

func typesUID(s string) types.UID { return types.UID(s) }

// indent turns a YAML document into a list item's body.
func indent(doc string) string {
	lines := strings.Split(strings.TrimRight(doc, "\n"), "\n")
	for i := 1; i < len(lines); i++ {
		lines[i] = "  " + lines[i]
	}
	return strings.Join(lines, "\n") + "\n"
}
