package checkpoint

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// An entry on disk is its data with a checksum over it, as the kubelet's
// checkpointmanager keeps one: a file that a crash or a full disk left short
// or garbled fails the check and is refused, never read as a pod.
//
//	{"checksum":"sha256:<hex>","data":<the JSON of the value>}
type envelope struct {
	Checksum string          `json:"checksum"`
	Data     json.RawMessage `json:"data"`
}

// errCorrupt marks an entry that fails its checksum or does not parse.
var errCorrupt = errors.New("corrupt checkpoint entry")

func checksum(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// encode is v's entry and its checksum. The data is written as
// marshalled, so that the bytes the checksum covers are the bytes read back.
func encode(v any) ([]byte, string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, "", err
	}
	sum := checksum(data)
	var b bytes.Buffer
	b.Grow(len(data) + 96)
	b.WriteString(`{"checksum":"`)
	b.WriteString(sum)
	b.WriteString(`","data":`)
	b.Write(data)
	b.WriteString("}\n")
	return b.Bytes(), sum, nil
}

// decode checks an entry's checksum and unmarshals its data into v; it
// returns the checksum.
func decode(raw []byte, v any) (string, error) {
	var e envelope
	if err := json.Unmarshal(raw, &e); err != nil {
		return "", fmt.Errorf("%w: %v", errCorrupt, err)
	}
	sum := checksum(e.Data)
	if e.Checksum != sum {
		return "", fmt.Errorf("%w: checksum mismatch", errCorrupt)
	}
	if err := json.Unmarshal(e.Data, v); err != nil {
		return "", fmt.Errorf("%w: %v", errCorrupt, err)
	}
	return sum, nil
}

// readEntry reads and decodes the entry at path; it returns the checksum.
func readEntry(path string, v any) (string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return decode(raw, v)
}
