package sandbox

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStart measures one command (sh -c true) from start to reaped:
// plain sh in a new session as run_command used to start it, then through
// the launcher in each mode. The difference is the launcher's cost per
// command: a second exec of this binary, and Landlock where it confines.
func BenchmarkStart(b *testing.B) {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devnull.Close()
	dir := b.TempDir()
	b.Run("sh", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command("sh", "-c", "true")
			cmd.Dir, cmd.Stdout, cmd.Stderr = dir, devnull, devnull
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, mode := range []Mode{Off, Workspace, WorkspaceNoNetwork} {
		b.Run(mode.String(), func(b *testing.B) {
			for b.Loop() {
				p, err := Start(Command{Mode: mode, Dir: dir, Shell: "true", Output: devnull})
				if err != nil {
					b.Fatal(err)
				}
				_ = p.Exit()
				if err := p.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWatch measures what watching a command's writes costs: a
// command that opens 1,000 files for writing (each one call the launcher
// answers) and one that opens them 1,000 times for reading (which the
// filter lets through without the launcher), each with the watch and
// without. The difference over 1,000 is the cost per file.
func BenchmarkWatch(b *testing.B) {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devnull.Close()
	dir := b.TempDir()
	for _, c := range []struct{ name, shell string }{
		{"write1000", "i=0; while [ $i -lt 1000 ]; do : > f$i; i=$((i+1)); done"},
		{"read1000", "i=0; while [ $i -lt 1000 ]; do : < f0; i=$((i+1)); done"},
		{"true", "true"},
	} {
		for _, watched := range []bool{false, true} {
			name := c.name + "/unwatched"
			if watched {
				name = c.name + "/watched"
			}
			b.Run(name, func(b *testing.B) {
				defer func(was bool) { watchWrites = was }(watchWrites)
				watchWrites = watched
				// CPU time tells the watch's cost apart from waiting for
				// a CPU on a busy machine: the launcher's and all it
				// waited for, the command included.
				var cpu time.Duration
				for b.Loop() {
					p, err := Start(Command{Mode: Workspace, Dir: dir, Shell: c.shell, Output: devnull})
					if err != nil {
						b.Fatal(err)
					}
					if e := p.Exit(); e != (Exit{}) {
						b.Fatalf("%s: %+v", c.shell, e)
					}
					if w := p.Writes(); w.Watched != watched {
						b.Fatalf("watched %v: %s", w.Watched, w.Why)
					}
					cpu += p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime()
					if err := p.Close(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
			})
		}
	}
}

// BenchmarkEndAll measures what ending a command costs when it leaves a
// process running (a loop of sleeps): in sh's group, or in a session of
// its own (setsid). The launcher finds it in /proc, kills and reaps it
// before it says the command has ended; BenchmarkStart's workspace case
// is the same command leaving nothing.
func BenchmarkEndAll(b *testing.B) {
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer devnull.Close()
	dir := b.TempDir()
	for _, how := range []string{"group", "setsid"} {
		b.Run(how, func(b *testing.B) {
			mark := marked(b)
			shell := "sh -c ': " + mark + "; while :; do sleep 1; done' </dev/null >/dev/null 2>&1 &"
			if how == "setsid" {
				shell = "setsid " + shell
			}
			for b.Loop() {
				p, err := Start(Command{Mode: Workspace, Dir: dir, Shell: shell, Output: devnull})
				if err != nil {
					b.Fatal(err)
				}
				_ = p.Exit()
				if err := p.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkPolicy measures what retrace does before each command to
// decide what it may touch, on this machine's own home directory: every
// grant resolved, those that hold a secret place split around it, every
// path stat'ed.
func BenchmarkPolicy(b *testing.B) {
	st, c, goBin := Status{Files: true, ABI: 7}, Command{Dir: b.TempDir()}, toolchain()
	for b.Loop() {
		newPolicy(st, c, "/tmp/t", "", os.Getenv, goBin)
	}
}
