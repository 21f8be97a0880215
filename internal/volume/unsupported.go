package volume

import (
	"fmt"
	"reflect"
	"strings"
)

// unsupported is the error for a volume (or persistentVolume) source runlet
// has no plugin for: the pod waits with FailedMount instead of running
// without the volume.
func unsupported(src any) error {
	return fmt.Errorf("runlet does not support %s volumes", sourceType(src))
}

// sourceType names the set field of a VolumeSource or PersistentVolumeSource
// as the API spells it ("csi", "nfs", ...).
func sourceType(src any) string {
	v := reflect.Indirect(reflect.ValueOf(src))
	for i := 0; i < v.NumField(); i++ {
		f := v.Field(i)
		if f.Kind() == reflect.Pointer && !f.IsNil() {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
			return name
		}
	}
	return "unknown"
}
