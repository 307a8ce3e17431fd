package powercut

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// disk is a model of storage that loses power: each file's bytes as the
// running system sees them and as they were at its last sync, and the
// names in directories as they are and as they were at the directory's
// last sync.
type disk struct {
	files   []*modelFile
	names   map[string]int // path -> file, now
	durable map[string]int // path -> file, after a power cut
	// Directories made during the trace, now and after a power cut; those
	// that were there before it are taken to be on disk.
	dirs, durableDirs map[string]bool
	syncs             int
	// offsets are where write(2) on each open descriptor of a file under
	// root writes next; appending marks one opened with O_APPEND.
	offsets   map[int64]int64
	appending map[int64]bool
	// root is the tree the model must account for: a call it does not
	// know, there, fails the test.
	root string
}

type modelFile struct {
	now, synced []byte
}

func newDisk(root string) *disk {
	return &disk{names: map[string]int{}, durable: map[string]int{}, dirs: map[string]bool{}, durableDirs: map[string]bool{},
		offsets: map[int64]int64{}, appending: map[int64]bool{}, root: filepath.Clean(root)}
}

// durableFile is what a power cut leaves at path: nothing unless its name
// and the name of every directory above it made during the trace survive.
func (d *disk) durableFile(path string) ([]byte, bool) {
	f, ok := d.durable[path]
	if !ok {
		return nil, false
	}
	for dir := filepath.Dir(path); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if d.dirs[dir] && !d.durableDirs[dir] {
			return nil, false
		}
	}
	return slices.Clone(d.files[f].synced), true
}

// file is the model file a descriptor's path names; a file opened before
// the trace began (none the writer cares about) is made up empty.
func (d *disk) file(path string) *modelFile {
	f, ok := d.names[path]
	if !ok {
		d.files = append(d.files, &modelFile{})
		f = len(d.files) - 1
		d.names[path] = f
	}
	return d.files[f]
}

// isFile reports a path the model must account for: one under root.
func (d *disk) isFile(path string) bool {
	return path == d.root || strings.HasPrefix(path, d.root+string(filepath.Separator))
}

// call is one system call being applied, with helpers that fail the test
// on arguments the trace should not hold.
type call struct {
	t testing.TB
	sysCall
}

func (c call) arg(i int) sysArg {
	c.t.Helper()
	if i >= len(c.args) {
		c.t.Fatalf("trace line %d: %s has %d arguments, want more", c.line, c.name, len(c.args))
	}
	return c.args[i]
}

func (c call) num(i int) int64 {
	c.t.Helper()
	v, err := c.arg(i).int()
	if err != nil {
		c.t.Fatalf("trace line %d: %s argument %d: %v", c.line, c.name, i, err)
	}
	return v
}

// apply plays one call on the model. It returns what the writer printed
// when the call was a write to stdout.
func (d *disk) apply(t testing.TB, sc sysCall) (string, bool) {
	t.Helper()
	if strings.HasPrefix(sc.ret.raw, "-1") || sc.ret.raw == "?" {
		return "", false // failed calls change nothing
	}
	c := call{t, sc}
	switch c.name {
	case "openat", "open", "creat":
		d.open(c)
	case "write":
		if fd := c.arg(0); isStdout(fd) {
			return string(c.arg(1).str), true
		} else if d.isFile(fd.path) {
			d.write(c)
		}
	case "pwrite64":
		f := d.file(c.arg(0).path)
		wrote, _ := c.ret.int()
		f.now = writeAt(f.now, c.arg(1).str[:wrote], c.num(3))
	case "lseek":
		if d.isFile(c.arg(0).path) {
			at, _ := c.ret.int()
			d.offsets[c.num(0)] = at
		}
	case "writev", "pwritev", "pwritev2", "truncate", "sync_file_range", "msync":
		if d.isFile(c.arg(0).path) || c.name == "truncate" {
			t.Fatalf("trace line %d: %s on a file; the model does not know it", c.line, c.name)
		}
	case "ftruncate":
		f := d.file(c.arg(0).path)
		f.now = resize(f.now, c.num(1))
	case "fallocate":
		d.fallocate(c)
	case "fsync", "fdatasync":
		d.sync(c.arg(0).path)
	case "sync", "syncfs":
		t.Fatalf("trace line %d: %s; the model does not know it", c.line, c.name)
	default:
		d.entries(c)
	}
	return "", false
}

// entries plays the calls that change directories' entries, and fails on
// a call the model does not know.
func (d *disk) entries(c call) {
	c.t.Helper()
	switch c.name {
	case "link", "linkat":
		from, to, fromDir, toDir := c.arg(0), c.arg(1), sysArg{}, sysArg{}
		if c.name == "linkat" {
			fromDir, from, toDir, to = c.arg(0), c.arg(1), c.arg(2), c.arg(3)
		}
		if f, ok := d.names[resolve(fromDir, from.str)]; ok {
			d.names[resolve(toDir, to.str)] = f
		}
	case "unlink", "unlinkat":
		name, dir := c.arg(0), sysArg{}
		if c.name == "unlinkat" {
			dir, name = c.arg(0), c.arg(1)
		}
		delete(d.names, resolve(dir, name.str))
		delete(d.dirs, resolve(dir, name.str))
	case "rename", "renameat", "renameat2":
		from, to, fromDir, toDir := c.arg(0), c.arg(1), sysArg{}, sysArg{}
		if c.name != "rename" {
			fromDir, from, toDir, to = c.arg(0), c.arg(1), c.arg(2), c.arg(3)
		}
		src, dst := resolve(fromDir, from.str), resolve(toDir, to.str)
		if f, ok := d.names[src]; ok {
			d.names[dst] = f
			delete(d.names, src)
		}
	case "mkdir", "mkdirat":
		name, dir := c.arg(0), sysArg{}
		if c.name == "mkdirat" {
			dir, name = c.arg(0), c.arg(1)
		}
		d.dirs[resolve(dir, name.str)] = true
	case "mmap":
		if strings.Contains(c.arg(2).raw, "PROT_WRITE") && strings.Contains(c.arg(3).raw, "MAP_SHARED") && d.isFile(c.arg(4).path) {
			c.t.Fatalf("trace line %d: a shared writable mapping of %s; the model does not know it", c.line, c.arg(4).path)
		}
	default:
		c.t.Fatalf("trace line %d: %s; the model does not know it", c.line, c.name)
	}
}

// open makes the file an O_CREAT names, empties one O_TRUNC names, and
// starts the descriptor's offset.
func (d *disk) open(c call) {
	flags := ""
	if c.name == "openat" {
		flags = c.arg(2).raw
	} else if c.name == "open" {
		flags = c.arg(1).raw
	}
	if !c.ret.hasFD {
		return
	}
	if c.name == "creat" || strings.Contains(flags, "O_CREAT") {
		d.file(c.ret.path)
	}
	if c.name == "creat" || strings.Contains(flags, "O_TRUNC") {
		d.file(c.ret.path).now = nil
	}
	if fd, err := c.ret.int(); err == nil {
		d.offsets[fd] = 0
		d.appending[fd] = strings.Contains(flags, "O_APPEND")
	}
}

// write plays write(2) on a file under root, at its descriptor's offset.
func (d *disk) write(c call) {
	fd := c.num(0)
	f := d.file(c.arg(0).path)
	wrote, _ := c.ret.int()
	at := d.offsets[fd]
	if d.appending[fd] {
		at = int64(len(f.now))
	}
	f.now = writeAt(f.now, c.arg(1).str[:wrote], at)
	d.offsets[fd] = at + wrote
}

func (d *disk) fallocate(c call) {
	f := d.file(c.arg(0).path)
	if mode := c.num(1); mode != 0 {
		c.t.Fatalf("trace line %d: fallocate mode %d; the model knows only 0", c.line, mode)
	}
	if end := c.num(2) + c.num(3); end > int64(len(f.now)) {
		f.now = resize(f.now, end)
	}
}

// sync makes a file's bytes, or a directory's entries, survive a cut.
func (d *disk) sync(path string) {
	d.syncs++
	if fi, err := os.Stat(path); d.dirs[path] || err == nil && fi.IsDir() {
		d.syncDir(path)
		return
	}
	f := d.file(path)
	f.synced = slices.Clone(f.now)
}

// syncDir makes the directory's entries as they are now survive a cut.
func (d *disk) syncDir(dir string) {
	for path := range d.durable {
		if filepath.Dir(path) == dir {
			delete(d.durable, path)
		}
	}
	for path, f := range d.names {
		if filepath.Dir(path) == dir {
			d.durable[path] = f
		}
	}
	for path := range d.durableDirs {
		if filepath.Dir(path) == dir && !d.dirs[path] {
			delete(d.durableDirs, path)
		}
	}
	for path := range d.dirs {
		if filepath.Dir(path) == dir {
			d.durableDirs[path] = true
		}
	}
}

func writeAt(b, data []byte, off int64) []byte {
	if end := off + int64(len(data)); end > int64(len(b)) {
		b = resize(b, end)
	}
	copy(b[off:], data)
	return b
}

func resize(b []byte, n int64) []byte {
	if n <= int64(len(b)) {
		return b[:n]
	}
	return append(b, make([]byte, n-int64(len(b)))...)
}

// isStdout reports a call's first argument is file descriptor 1.
func isStdout(a sysArg) bool { fd, err := a.int(); return err == nil && fd == 1 }
