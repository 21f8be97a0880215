package kubeletconfig

import (
	"io/fs"
	"path/filepath"
)

// dropinExt is the kubelet's: other files in --config-dir are skipped.
const dropinExt = ".conf"

// dropins lists the *.conf files under dir, subdirectories included, in
// lexical order (filepath.WalkDir's), as the kubelet walks them.
func dropins(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && filepath.Ext(d.Name()) == dropinExt {
			files = append(files, path)
		}
		return nil
	})
	return files, err
}

// mergePatch applies patch to target as RFC 7386 says (the kubelet's
// jsonpatch.MergePatch): objects merge key by key, null deletes a key,
// anything else replaces.
func mergePatch(target, patch map[string]any) map[string]any {
	if target == nil {
		target = map[string]any{}
	}
	for k, v := range patch {
		switch pv := v.(type) {
		case nil:
			delete(target, k)
		case map[string]any:
			tv, _ := target[k].(map[string]any)
			target[k] = mergePatch(tv, pv)
		default:
			target[k] = v
		}
	}
	return target
}
