package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"retrace/agent/session"
	"retrace/agent/tools"
	"retrace/storage/boltstore"
	"retrace/themes"
	"retrace/tui"
)

// The year-of-use benchmark measures the interface's first frame and
// first message in a process of their own, as `retrace -r ID` has one, so
// that what the first operation of a process costs, and its peak memory,
// are real. That process is this binary, re-executed with benchChildEnv
// set, as Go's own tests re-run their binary as a helper: a mode no
// command line reaches, so it is no command a person sees. It takes over
// in init, before main parses anything.
const (
	benchChildEnv     = "RETRACE_BENCH_CHILD" // the mode: "resume", or "cli" for a command line
	benchChildPeak    = "RETRACE_BENCH_PEAK"  // a file the child writes its peak memory to, in KiB
	benchChildDB      = "RETRACE_BENCH_DB"
	benchChildSession = "RETRACE_BENCH_SESSION"
	benchChildWS      = "RETRACE_BENCH_WORKSPACE"
	benchChildConfig  = "RETRACE_BENCH_CONFIG" // an empty config file: the person's own is not read
)

// benchProbe is the message the child sends: words no built session
// holds, so the screen shows them only once the message is written.
const benchProbe = "year-of-use probe: is the build still failing?"

func init() {
	mode := os.Getenv(benchChildEnv)
	if mode == "" {
		return
	}
	code := exitOK
	switch mode {
	case "cli":
		code = run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	case "resume":
		r, err := benchResume(os.Getenv(benchChildDB), os.Getenv(benchChildSession), os.Getenv(benchChildWS), os.Getenv(benchChildConfig))
		if err == nil {
			err = json.NewEncoder(os.Stdout).Encode(r)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "retrace bench child: %v\n", err)
			code = exitError
		}
	default:
		fmt.Fprintf(os.Stderr, "retrace bench child: unknown %s mode %q\n", benchChildEnv, mode)
		code = exitError
	}
	if err := writePeak(os.Getenv(benchChildPeak)); err != nil {
		fmt.Fprintf(os.Stderr, "retrace bench child: %v\n", err)
		code = exitError
	}
	os.Exit(code)
}

// writePeak writes this process's peak resident memory, in KiB, to path.
// It is read from the process's own memory map (VmHWM), not from the
// rusage the parent gets: Go starts a child in the parent's address
// space (vfork), and Linux counts the parent's peak as the child's
// ru_maxrss, so every child would seem to use what the benchmark did.
func writePeak(path string) error {
	if path == "" {
		return nil
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return fmt.Errorf("peak memory: %w", err)
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return os.WriteFile(path, []byte(strings.TrimSuffix(strings.TrimSpace(v), " kB")), 0o600)
		}
	}
	return errors.New("peak memory: /proc/self/status has no VmHWM")
}

// resumeFigures are what the resume child measured, in milliseconds.
type resumeFigures struct {
	FirstFrameMS   float64 `json:"first_frame_ms"`
	FirstMessageMS float64 `json:"first_message_ms"`
}

// benchResume does what `retrace -r ID` does before its first frame (open
// the store, open the session with the controller, build the interface,
// size it, draw it once), then types one message and waits for a frame
// that shows it: the session's first write in this process. The demo
// model answers, so no key and no network; the task is cancelled once the
// message shows.
func benchResume(db, id, wsDir, config string) (resumeFigures, error) {
	var r resumeFigures
	ctx := context.Background()
	cfg, err := loadConfig(modelFlags{model: "retrace-demo", baseURL: demoEndpoint, configPath: config}, func(string) string { return "" })
	if err != nil {
		return r, err
	}
	ws, err := tools.NewWorkspace(wsDir)
	if err != nil {
		return r, err
	}
	t0 := time.Now()
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		return r, err
	}
	defer st.Close()
	dm := &demoModel{}
	defer dm.close()
	ctrl := session.New(ctx, st, cfg.session(ws, nil, true, dm))
	defer ctrl.Close()
	if err := ctrl.Open(id); err != nil {
		return r, err
	}
	m := tui.New(tuiDriver{ctrl: ctrl}, tui.Options{Palette: themes.Default()})
	p := newPump(m)
	defer p.close()
	p.handle(tea.WindowSizeMsg{Width: 120, Height: 40})
	if strings.Contains(p.screen(), benchProbe) {
		return r, errors.New("the session shows the probe message before it was sent")
	}
	r.FirstFrameMS = benchMS(time.Since(t0))

	p.do(m.Init())
	t1 := time.Now()
	for _, c := range benchProbe {
		p.handle(tea.KeyPressMsg(tea.Key{Code: c, Text: string(c)}))
	}
	p.handle(tea.KeyPressMsg(tea.Key{Code: tea.KeyEnter}))
	if s, ok := p.waitFor(time.Minute, func(s string) bool { return strings.Contains(s, benchProbe) }); !ok {
		return r, fmt.Errorf("the message sent never showed; the screen:\n%s", s)
	}
	r.FirstMessageMS = benchMS(time.Since(t1))
	ctrl.Cancel()
	return r, ctrl.Close()
}

func benchMS(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
