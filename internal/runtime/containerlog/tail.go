package containerlog

import "io"

// tailBlock is how much of the file is read per step backwards.
const tailBlock = 4096

// tailStart returns the offset of the n-th line from the end of f (size
// bytes long); n < 0 means the whole file. A last line without its newline
// still counts as a line, as in the kubelet.
func tailStart(f io.ReaderAt, size, n int64) (int64, error) {
	if n < 0 {
		return 0, nil
	}
	if n == 0 {
		return size, nil
	}
	buf := make([]byte, tailBlock)
	end := size
	skipLast := true // the file's final newline ends the last line, it does not start one
	for end > 0 {
		start := max(end-tailBlock, 0)
		chunk := buf[:end-start]
		if _, err := f.ReadAt(chunk, start); err != nil && err != io.EOF {
			return 0, err
		}
		for i := len(chunk) - 1; i >= 0; i-- {
			if chunk[i] != '\n' {
				skipLast = false
				continue
			}
			if skipLast {
				skipLast = false
				continue
			}
			if n--; n == 0 {
				return start + int64(i) + 1, nil
			}
		}
		end = start
	}
	return 0, nil
}
