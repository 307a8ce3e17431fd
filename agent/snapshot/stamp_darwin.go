package snapshot

import (
	"io/fs"
	"syscall"
)

func stampOf(info fs.FileInfo) stamp {
	st := stamp{size: info.Size(), mtime: info.ModTime().UnixNano(), mode: info.Mode()}
	if sys, ok := info.Sys().(*syscall.Stat_t); ok {
		st.ctime = sys.Ctimespec.Nano()
		st.ino = sys.Ino
	}
	return st
}
