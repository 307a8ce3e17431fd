package powercut

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// This file reads what strace recorded of a writer process, for the
// power-cut test: every call that changes a file's bytes, its size or a
// directory's entries, every sync, and what the process wrote to stdout.
// It understands exactly the output of
//
//	strace -f -y -xx -s 16777216 -e trace=<fileCalls> -o FILE
//
// and refuses anything else rather than guess.

// fileCalls are the system calls the power-cut model needs to see.
const fileCalls = "openat,open,creat,write,pwrite64,lseek,writev,pwritev,pwritev2,ftruncate,truncate,fallocate," +
	"fsync,fdatasync,sync_file_range,sync,syncfs,link,linkat,unlink,unlinkat,rename,renameat,renameat2,mkdir,mkdirat,mmap,msync"

// sysCall is one completed system call.
type sysCall struct {
	line int // in the trace, for messages
	name string
	args []sysArg
	ret  sysArg
}

// sysArg is one argument (or the return value): its raw text, the
// decoded bytes of a quoted string, and the path strace's -y printed for
// a file descriptor.
type sysArg struct {
	raw    string
	str    []byte
	quoted bool
	path   string // from "3</dir/file>"
	hasFD  bool
}

func (a sysArg) int() (int64, error) {
	s := a.raw
	if i := strings.IndexByte(s, '<'); i >= 0 {
		s = s[:i]
	}
	return strconv.ParseInt(strings.TrimSpace(s), 0, 64)
}

// readTrace parses a strace output file into its completed calls, in the
// order they completed: a call split by another thread's call
// ("<unfinished ...>" then "<... resumed>") counts when it resumed.
func readTrace(path string) ([]sysCall, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	pending := map[string]string{} // pid -> the unfinished start of its call
	var calls []sysCall
	for n := 1; sc.Scan(); n++ {
		pid, rest, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			return nil, fmt.Errorf("trace line %d: no pid: %.80q", n, sc.Text())
		}
		rest = strings.TrimLeft(rest, " ")
		switch {
		case strings.HasPrefix(rest, "+++"), strings.HasPrefix(rest, "---"):
			continue // exits and signals
		case strings.HasSuffix(rest, "<unfinished ...>"):
			pending[pid] = strings.TrimSuffix(rest, "<unfinished ...>")
			continue
		case strings.HasPrefix(rest, "<... "):
			start, ok := pending[pid]
			end := strings.Index(rest, " resumed>")
			if !ok || end < 0 {
				return nil, fmt.Errorf("trace line %d: a resumed call that never started: %.80q", n, rest)
			}
			delete(pending, pid)
			rest = start + rest[end+len(" resumed>"):]
		}
		c, err := parseCall(rest)
		if err != nil {
			return nil, fmt.Errorf("trace line %d: %w: %.120q", n, err, rest)
		}
		c.line = n
		calls = append(calls, c)
	}
	return calls, sc.Err()
}

// parseCall parses "name(arg, arg, ...) = ret".
func parseCall(s string) (sysCall, error) {
	open := strings.IndexByte(s, '(')
	if open <= 0 {
		return sysCall{}, fmt.Errorf("no call")
	}
	c := sysCall{name: s[:open]}
	p := &argParser{s: s, i: open + 1}
	for {
		p.space()
		if p.peek() == ')' {
			p.i++
			break
		}
		a, err := p.arg(",)")
		if err != nil {
			return c, err
		}
		c.args = append(c.args, a)
		p.space()
		switch p.peek() {
		case ',':
			p.i++
		case ')':
		default:
			return c, fmt.Errorf("unexpected %q after argument %d", p.peek(), len(c.args))
		}
	}
	p.space()
	if !strings.HasPrefix(s[p.i:], "= ") {
		return c, fmt.Errorf("no return value")
	}
	p.i += 2
	ret, err := p.arg(" ")
	if err != nil {
		return c, err
	}
	c.ret = ret
	return c, nil
}

type argParser struct {
	s string
	i int
}

func (p *argParser) peek() byte {
	if p.i >= len(p.s) {
		return 0
	}
	return p.s[p.i]
}

func (p *argParser) space() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

// arg reads one argument up to a top-level byte of stop: a quoted string,
// or text in which brackets, braces and <path> nest.
func (p *argParser) arg(stop string) (sysArg, error) {
	start := p.i
	var a sysArg
	depth := 0
	for p.i < len(p.s) {
		ch := p.s[p.i]
		switch {
		case ch == '"':
			str, err := p.quoted()
			if err != nil {
				return a, err
			}
			a.str, a.quoted = append(a.str, str...), true
			continue
		case ch == '<' && depth == 0:
			end := strings.IndexByte(p.s[p.i:], '>')
			if end < 0 {
				return a, fmt.Errorf("unclosed <path>")
			}
			path, err := unescape(p.s[p.i+1 : p.i+end])
			if err != nil {
				return a, err
			}
			a.path, a.hasFD = string(path), true
			p.i += end + 1
			continue
		case ch == '[' || ch == '{':
			depth++
		case ch == ']' || ch == '}':
			depth--
		case depth == 0 && strings.IndexByte(stop, ch) >= 0:
			a.raw = p.s[start:p.i]
			return a, nil
		}
		p.i++
	}
	a.raw = p.s[start:]
	return a, nil
}

// quoted reads a C string as strace prints it, "..." marking a string
// strace cut short.
func (p *argParser) quoted() ([]byte, error) {
	p.i++ // the opening quote
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != '"' {
		if p.s[p.i] == '\\' {
			p.i++
		}
		p.i++
	}
	if p.i >= len(p.s) {
		return nil, fmt.Errorf("unclosed string")
	}
	b, err := unescape(p.s[start:p.i])
	p.i++ // the closing quote
	if strings.HasPrefix(p.s[p.i:], "...") {
		return nil, fmt.Errorf("strace cut a string short; raise -s")
	}
	return b, err
}

// unescape decodes strace's escapes: \xHH (all -xx prints), and the
// usual C ones.
func unescape(s string) ([]byte, error) {
	out := make([]byte, 0, len(s)/4)
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			out = append(out, s[i])
			continue
		}
		i++
		if i >= len(s) {
			return nil, fmt.Errorf("a trailing backslash")
		}
		switch s[i] {
		case 'x':
			if i+3 > len(s) {
				return nil, fmt.Errorf("a short \\x escape")
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return nil, fmt.Errorf("bad \\x escape %q", s[i:i+3])
			}
			out = append(out, byte(v))
			i += 2
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'v':
			out = append(out, '\v')
		case 'f':
			out = append(out, '\f')
		case '\\', '"':
			out = append(out, s[i])
		default:
			return nil, fmt.Errorf("unknown escape \\%c", s[i])
		}
	}
	return out, nil
}

// resolve makes a path argument absolute against the directory strace
// printed for its dirfd (or the call's other absolute context).
func resolve(dir sysArg, name []byte) string {
	if filepath.IsAbs(string(name)) {
		return filepath.Clean(string(name))
	}
	return filepath.Join(dir.path, string(name))
}
