package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"retrace/agent/session"
	"retrace/state/transcript"
	"retrace/storage"
	"retrace/storage/boltstore"
	"retrace/storage/yearbench"
)

// yearFlags are `retrace bench --sessions N`'s settings.
type yearFlags struct {
	sessions, checkpoints, runs int
	asJSON                      bool
}

// yearResult is every figure of one year-of-use run. Times are
// milliseconds, each the median of Runs runs; sizes are bytes.
type yearResult struct {
	Sessions    int       `json:"sessions"`
	Checkpoints int       `json:"checkpoints_per_session"`
	Runs        int       `json:"runs"`
	Session     string    `json:"session"`     // the one measured
	Head        int       `json:"head"`        // its head
	RollbackTo  int       `json:"rollback_to"` // the version rollback moves it to
	BuildMS     float64   `json:"build_ms"`
	BigBytes    int64     `json:"big_file_bytes"`
	AloneBytes  int64     `json:"alone_file_bytes"`
	Operations  []yearOp  `json:"operations"`
	GC          yearGC    `json:"gc"`
	Measured    time.Time `json:"measured_at"`
}

// yearOp is one operation on the measured session, alone and in the big
// file.
type yearOp struct {
	Name  string     `json:"name"`
	Alone yearFigure `json:"alone"`
	Big   yearFigure `json:"big"`
	Ratio float64    `json:"ratio"` // big over alone
}

// yearFigure is the median of the runs, and each run. PeakRSSMB is the
// median of the runs' child processes' peak resident memory; zero for an
// operation measured in the benchmark's own process.
type yearFigure struct {
	MS        float64   `json:"ms"`
	PeakRSSMB float64   `json:"peak_rss_mb,omitempty"`
	RunsMS    []float64 `json:"runs_ms"`
}

// yearGC is gc and compact on the big file, once each.
type yearGC struct {
	DryRun  yearSpace `json:"dry_run"`
	GC      yearSpace `json:"gc"`
	Compact yearSpace `json:"compact"`
	// Remaining is the number of sessions after gc; Identical says every
	// one of them has byte for byte the `show --json` it had before gc,
	// and still after compact, and that gc took exactly the old ones.
	Remaining int      `json:"sessions_remaining"`
	Identical bool     `json:"show_json_identical"`
	Problems  []string `json:"problems,omitempty"`
}

// yearSpace is one run of gc or compact: its time (opening the store
// included, as the command does), what it reported and the file's size
// around it.
type yearSpace struct {
	MS            float64 `json:"ms"`
	Sessions      int     `json:"sessions_removed"`
	ReportedBytes int64   `json:"reported_bytes"`
	FileBefore    int64   `json:"file_before"`
	FileAfter     int64   `json:"file_after"`
}

// benchYear builds a file of many sessions and one of the measured
// session alone, in dir, and measures the session in both.
func benchYear(ctx context.Context, c *cli, dir string, f yearFlags) (yearResult, error) {
	r := yearResult{Sessions: f.sessions, Checkpoints: f.checkpoints, Runs: f.runs}
	exe, err := os.Executable()
	if err != nil {
		return r, fmt.Errorf("bench: find this retrace to run it again: %w", err)
	}
	big, alone := filepath.Join(dir, "bench.db"), filepath.Join(dir, "alone.db")
	// The sessions work here: the resume measured works in the session's
	// own workspace, which must be a directory.
	ws := filepath.Join(dir, "workspace")
	if err := os.Mkdir(ws, 0o700); err != nil {
		return r, fmt.Errorf("bench: %w", err)
	}
	t0 := time.Now()
	measured, err := buildYear(ctx, c, big, alone, ws, f)
	if err != nil {
		return r, err
	}
	r.BuildMS = benchMS(time.Since(t0))
	r.Session, r.Head = measured.Session.ID, measured.Session.Head
	r.RollbackTo = rollbackTarget(measured)
	if r.BigBytes, err = benchFileSize(big); err != nil {
		return r, err
	}
	if r.AloneBytes, err = benchFileSize(alone); err != nil {
		return r, err
	}
	m := yearMeasure{exe: exe, dir: dir, ws: ws, runs: f.runs, id: r.Session, head: r.Head, to: r.RollbackTo, stderr: c.stderr}
	figs, err := m.all(ctx, alone, big)
	if err != nil {
		return r, err
	}
	for i, name := range yearOpNames {
		a, b := figs[alone][i], figs[big][i]
		r.Operations = append(r.Operations, yearOp{Name: name, Alone: a, Big: b, Ratio: ratio(b.MS, a.MS)})
	}
	fmt.Fprintf(c.stderr, "bench: gc --dry-run, gc and compact on the %d-session file\n", f.sessions)
	if r.GC, err = gcYear(ctx, big); err != nil {
		return r, err
	}
	r.Measured = time.Now().UTC().Truncate(time.Second)
	return r, nil
}

// buildYear writes the big file and the file of the measured session
// alone, with a line of progress on stderr every few seconds.
func buildYear(ctx context.Context, c *cli, big, alone, ws string, f yearFlags) (storage.Export, error) {
	fmt.Fprintf(c.stderr, "bench: building %d sessions of %d checkpoints each in %s\n", f.sessions, f.checkpoints, big)
	plan := yearbench.Plan{Sessions: f.sessions, Checkpoints: f.checkpoints, Now: time.Now(), Workspace: ws}
	st, err := boltstore.Open(big, boltstore.Options{})
	if err != nil {
		return storage.Export{}, err
	}
	start, last := time.Now(), time.Now()
	measured, err := yearbench.Build(ctx, st, plan, func(done int) {
		if done == f.sessions || time.Since(last) >= 3*time.Second {
			last = time.Now()
			size, _ := benchFileSize(big)
			elapsed := time.Since(start)
			fmt.Fprintf(c.stderr, "bench: built %d/%d sessions, %s, %s elapsed, about %s to go\n", done, f.sessions,
				approxBytes(size), elapsed.Round(time.Second), (elapsed / time.Duration(done) * time.Duration(f.sessions-done)).Round(time.Second))
		}
	})
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return measured, err
	}
	one, err := boltstore.Open(alone, boltstore.Options{})
	if err != nil {
		return measured, err
	}
	if _, err := one.Import(ctx, measured); err != nil {
		one.Close()
		return measured, fmt.Errorf("bench: the measured session alone: %w", err)
	}
	return measured, one.Close()
}

// rollbackTarget is the version rollback moves the measured session to:
// the end of the task nearest half way, at rest like the head (0, the
// empty session, when the session is one task).
func rollbackTarget(ex storage.Export) int {
	half, to := ex.Session.Head/2, 0
	for _, r := range ex.Checkpoints {
		if r.Version < ex.Session.Head && !r.Phase.Active() && abs(r.Version-half) < abs(to-half) {
			to = r.Version
		}
	}
	return to
}

func abs(n int) int { return max(n, -n) }

// yearOpNames are the operations measured on the session, in the order
// yearMeasure.all returns them.
var yearOpNames = []string{"show", "rollback (first write)", "resume: open to first frame", "resume: first message visible", "head load"}

// yearMeasure runs the measurements of one file.
type yearMeasure struct {
	exe, dir string
	ws       string // the sessions' workspace
	runs     int
	id       string
	head, to int
	stderr   io.Writer
}

// all measures every operation in each file, its runs times, and returns
// each file's figures in yearOpNames' order. The files take turns, run by
// run, so that whatever the machine is doing meanwhile (writing back the
// file just built, other work) falls on all of them alike.
func (m yearMeasure) all(ctx context.Context, files ...string) (map[string][]yearFigure, error) {
	fmt.Fprintf(m.stderr, "bench: measuring session %s in %s, in turns (%s each)\n", m.id, strings.Join(baseNames(files), " and "), transcript.Count(m.runs, "run"))
	ws := m.ws
	config := filepath.Join(m.dir, "config.toml")
	if err := os.WriteFile(config, nil, 0o600); err != nil {
		return nil, err
	}
	// restore puts the head back where every run starts: a rollback moved
	// it, and a resume's message and its cancelled task stay on a branch
	// of their own. Copying the file instead would rewrite gigabytes per
	// run.
	restore := func(file string) error {
		_, err := m.child(ctx, nil, "rollback", m.id, strconv.Itoa(m.head), "--db", file)
		return err
	}
	// Each operation gives one run's figures, in yearOpNames' order
	// (resume gives two: the first frame and the first message).
	ops := []func(file string) ([]benchRun, error){
		func(file string) ([]benchRun, error) {
			r, err := m.child(ctx, nil, "show", m.id, "--db", file)
			return []benchRun{r}, err
		},
		func(file string) ([]benchRun, error) {
			r, err := m.child(ctx, nil, "rollback", m.id, strconv.Itoa(m.to), "--db", file)
			if err != nil {
				return nil, err
			}
			return []benchRun{r}, restore(file)
		},
		func(file string) ([]benchRun, error) {
			r, err := m.child(ctx, []string{benchChildEnv + "=resume", benchChildDB + "=" + file, benchChildSession + "=" + m.id, benchChildWS + "=" + ws, benchChildConfig + "=" + config})
			if err != nil {
				return nil, err
			}
			var fig resumeFigures
			if err := json.Unmarshal(r.stdout, &fig); err != nil {
				return nil, fmt.Errorf("bench: the resume child's figures: %w", err)
			}
			runs := []benchRun{{ms: fig.FirstFrameMS, rssKB: r.rssKB}, {ms: fig.FirstMessageMS, rssKB: r.rssKB}}
			return runs, restore(file)
		},
		func(file string) ([]benchRun, error) {
			r, err := headLoad(ctx, file, m.id)
			return []benchRun{r}, err
		},
	}
	runs := map[string][][]benchRun{} // file -> figure -> runs
	for _, file := range files {
		runs[file] = make([][]benchRun, len(yearOpNames))
	}
	fig := 0
	for _, op := range ops {
		n := 0
		for range m.runs {
			for _, file := range files {
				got, err := op(file)
				if err != nil {
					return nil, err
				}
				for i, r := range got {
					runs[file][fig+i] = append(runs[file][fig+i], r)
				}
				n = len(got)
			}
		}
		fig += n
	}
	out := map[string][]yearFigure{}
	for _, file := range files {
		for _, rs := range runs[file] {
			out[file] = append(out[file], median(rs))
		}
	}
	return out, nil
}

func baseNames(files []string) []string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = filepath.Base(f)
	}
	return names
}

// benchRun is one run's time and its process's peak resident memory.
type benchRun struct {
	ms     float64
	rssKB  int64
	stdout []byte
}

// child runs this retrace with extra environment (a command line, args,
// unless env names another mode) and returns its wall time and the peak
// memory it reported. A child that fails is an error quoting what it
// said.
func (m yearMeasure) child(ctx context.Context, env []string, args ...string) (benchRun, error) {
	if len(env) == 0 {
		env = []string{benchChildEnv + "=cli"}
	}
	peak := filepath.Join(m.dir, "peak")
	os.Remove(peak)
	cmd := exec.CommandContext(ctx, m.exe, args...)
	cmd.Env = append(os.Environ(), append(env, benchChildPeak+"="+peak)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	t0 := time.Now()
	err := cmd.Run()
	r := benchRun{ms: benchMS(time.Since(t0)), stdout: out.Bytes()}
	what := strings.Join(args, " ")
	if len(args) == 0 {
		what = env[0]
	}
	if err != nil {
		return r, fmt.Errorf("bench: retrace %s: %v: %s", what, err, strings.TrimSpace(errOut.String()))
	}
	kb, err := os.ReadFile(peak)
	if err == nil {
		r.rssKB, err = strconv.ParseInt(string(kb), 10, 64)
	}
	if err != nil {
		return r, fmt.Errorf("bench: retrace %s: its peak memory: %w", what, err)
	}
	return r, nil
}

// headLoad times Store.Head of the session from a store opened afresh, in
// this process.
func headLoad(ctx context.Context, file, id string) (benchRun, error) {
	st, err := boltstore.Open(file, boltstore.Options{})
	if err != nil {
		return benchRun{}, err
	}
	defer st.Close()
	t0 := time.Now()
	if _, err := st.Head(ctx, id); err != nil {
		return benchRun{}, err
	}
	return benchRun{ms: benchMS(time.Since(t0))}, nil
}

func median(runs []benchRun) yearFigure {
	var f yearFigure
	var times, rss []float64
	for _, r := range runs {
		f.RunsMS = append(f.RunsMS, r.ms)
		times = append(times, r.ms)
		if r.rssKB > 0 {
			rss = append(rss, float64(r.rssKB)/1024)
		}
	}
	f.MS = middle(times)
	if len(rss) > 0 {
		f.PeakRSSMB = middle(rss)
	}
	return f
}

func middle(xs []float64) float64 {
	xs = slices.Sorted(slices.Values(xs))
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// gcYear runs gc --dry-run, gc and compact on the big file, as the
// commands do (open the store, run, close), and checks that every session
// gc leaves shows byte for byte what it showed before, after gc and after
// compact.
func gcYear(ctx context.Context, file string) (yearGC, error) {
	var g yearGC
	before, err := showHashes(ctx, file)
	if err != nil {
		return g, err
	}
	opts := boltstore.GCOptions{OlderThan: yearbench.GCAge, DryRun: true}
	dry, err := gcOnce(ctx, file, opts, &g.DryRun)
	if err != nil {
		return g, err
	}
	opts.DryRun = false
	rep, err := gcOnce(ctx, file, opts, &g.GC)
	if err != nil {
		return g, err
	}
	afterGC, err := showHashes(ctx, file)
	if err != nil {
		return g, err
	}
	if err := compactOnce(ctx, file, &g.Compact); err != nil {
		return g, err
	}
	afterCompact, err := showHashes(ctx, file)
	if err != nil {
		return g, err
	}
	g.Remaining = len(afterCompact)
	g.Problems = checkGC(before, afterGC, afterCompact, dry, rep)
	g.Identical = len(g.Problems) == 0
	return g, nil
}

func gcOnce(ctx context.Context, file string, opts boltstore.GCOptions, out *yearSpace) (boltstore.GCReport, error) {
	var rep boltstore.GCReport
	err := timeSpace(file, out, func(st *boltstore.Store) (err error) {
		rep, err = st.GC(ctx, opts)
		return err
	})
	out.Sessions, out.ReportedBytes = len(rep.Sessions), rep.Bytes
	return rep, err
}

func compactOnce(ctx context.Context, file string, out *yearSpace) error {
	return timeSpace(file, out, func(st *boltstore.Store) error {
		rep, err := st.Compact(ctx)
		out.ReportedBytes = rep.Before - rep.After
		return err
	})
}

// timeSpace runs fn on the file's store as a command does (open, run,
// close), timing it and taking the file's size before and after.
func timeSpace(file string, out *yearSpace, fn func(*boltstore.Store) error) error {
	var err error
	if out.FileBefore, err = benchFileSize(file); err != nil {
		return err
	}
	t0 := time.Now()
	st, err := boltstore.Open(file, boltstore.Options{})
	if err == nil {
		err = fn(st)
		if cerr := st.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	out.MS = benchMS(time.Since(t0))
	out.FileAfter, err = benchFileSize(file)
	return err
}

// checkGC says what is wrong with a gc: a session it kept that shows
// anything else than before, one it took that it did not report, a dry
// run that disagrees with the run.
func checkGC(before, afterGC, afterCompact map[string]string, dry, rep boltstore.GCReport) []string {
	var problems []string
	gone := map[string]bool{}
	for _, s := range rep.Sessions {
		gone[s.ID] = true
	}
	if len(dry.Sessions) != len(rep.Sessions) || dry.Bytes != rep.Bytes {
		problems = append(problems, fmt.Sprintf("the dry run would remove %d sessions, %d bytes; gc removed %d, %d bytes", len(dry.Sessions), dry.Bytes, len(rep.Sessions), rep.Bytes))
	}
	for _, id := range slices.Sorted(maps.Keys(before)) {
		for stage, after := range map[string]map[string]string{"gc": afterGC, "compact": afterCompact} {
			h, kept := after[id]
			switch {
			case gone[id] && kept:
				problems = append(problems, fmt.Sprintf("session %s: gc reported it removed, but after %s it is there", id, stage))
			case !gone[id] && !kept:
				problems = append(problems, fmt.Sprintf("session %s: gone after %s, but gc did not report it", id, stage))
			case kept && h != before[id]:
				problems = append(problems, fmt.Sprintf("session %s: show --json differs after %s", id, stage))
			}
		}
	}
	slices.Sort(problems)
	return problems
}

// showHashes is the SHA-256 of what `retrace show --json` prints for each
// session's head, by id, from one store (a process per session would
// make the check take hours on a large file).
func showHashes(ctx context.Context, file string) (map[string]string, error) {
	st, err := boltstore.Open(file, boltstore.Options{})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	list, err := st.Sessions(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(list))
	for _, info := range list {
		s, err := st.At(ctx, info.ID, info.Head)
		if err != nil {
			return nil, fmt.Errorf("bench: show session %s: %w", info.ID, err)
		}
		h := sha256.New()
		if err := writeJSON(&cli{stdout: h}, s); err != nil {
			return nil, err
		}
		out[info.ID] = hex.EncodeToString(h.Sum(nil))
	}
	return out, nil
}

func benchFileSize(path string) (int64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, fmt.Errorf("bench: %w", err)
	}
	return fi.Size(), nil
}

// approxBytes is a size for progress lines: 1.4 GB, 230 MB.
func approxBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.0f KB", float64(n)/(1<<10))
}

// yearMode reads the year-of-use flags: nil when --sessions was not
// given (plain `retrace bench`).
func yearMode(fset *flag.FlagSet, sessions, checkpoints, runs int, asJSON bool) (*yearFlags, error) {
	set := map[string]bool{}
	fset.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case !set["sessions"] && set["runs"]:
		return nil, usagef("--runs goes with --sessions: it is how many fresh processes measure each figure of the year-of-use benchmark")
	case !set["sessions"]:
		return nil, nil
	case sessions < 1:
		return nil, usagef("--sessions must be at least 1, got %d", sessions)
	case runs < 1:
		return nil, usagef("--runs must be at least 1, got %d", runs)
	}
	return &yearFlags{sessions: sessions, checkpoints: checkpoints, runs: runs, asJSON: asJSON}, nil
}

// runYear runs the year-of-use benchmark in dir, keeps the big file at
// --db if one was given, and prints the figures.
func runYear(ctx context.Context, c *cli, dir string, f yearFlags) error {
	r, err := benchYear(ctx, c, dir, f)
	if err != nil {
		return err
	}
	if c.db != "" {
		if err := os.Rename(filepath.Join(dir, "bench.db"), c.db); err != nil {
			return fmt.Errorf("bench: keep the file: %w", err)
		}
	}
	if f.asJSON {
		return writeJSON(c, r)
	}
	printYear(c.stdout, r)
	return nil
}

// printYear is the table: each operation alone and in the big file, the
// ratio and the peak memory; then gc and compact.
func printYear(out io.Writer, r yearResult) {
	fmt.Fprintf(out, "one session of %d checkpoints (%s), alone in a %s file and among %d sessions in a %s file; medians of %s, each in a fresh process\n\n",
		r.Checkpoints, session.Short(r.Session), approxBytes(r.AloneBytes), r.Sessions, approxBytes(r.BigBytes), transcript.Count(r.Runs, "run"))
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "operation\talone\tin the big file\tratio\tpeak RSS alone\tpeak RSS big\t")
	for _, op := range r.Operations {
		fmt.Fprintf(w, "%s\t%.1f ms\t%.1f ms\t%.2f×\t%s\t%s\t\n", op.Name, op.Alone.MS, op.Big.MS, op.Ratio, rssOf(op.Alone), rssOf(op.Big))
	}
	w.Flush()
	g := r.GC
	fmt.Fprintf(out, "\ngc and compact on the big file (sessions not updated for %d days):\n", int(yearbench.GCAge/(24*time.Hour)))
	w = tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "command\ttime\tsessions\treported\tfile before\tfile after\t")
	for _, x := range []struct {
		name string
		s    yearSpace
	}{{"gc --dry-run", g.DryRun}, {"gc", g.GC}, {"compact", g.Compact}} {
		fmt.Fprintf(w, "%s\t%.0f ms\t%d\t%d bytes\t%d\t%d\t\n", x.name, x.s.MS, x.s.Sessions, x.s.ReportedBytes, x.s.FileBefore, x.s.FileAfter)
	}
	w.Flush()
	verdict := "byte-identical"
	if !g.Identical {
		verdict = "NOT identical: " + strings.Join(g.Problems, "; ")
	}
	fmt.Fprintf(out, "show --json of the %s before and after: %s\n", transcript.Count(g.Remaining, "remaining session"), verdict)
	fmt.Fprintf(out, "built in %.1f s\n", r.BuildMS/1000)
}

func rssOf(f yearFigure) string {
	if f.PeakRSSMB == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f MB", f.PeakRSSMB)
}
