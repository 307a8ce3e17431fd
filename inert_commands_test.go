package main

import (
	"fmt"
	"path/filepath"
	"retrace/state"
	"strings"
	"testing"

	"retrace/state/transcript/inerttest"
)

// inertMatrix names, for every command in the table, the tests that feed
// it hostile text in everything it prints. A command added to the table
// fails TestInertMatrixNamesEveryCommand until it is named here, and so
// until a matrix test covers it.
var inertMatrix = map[string]string{
	"run":          "TestInertMatrixRunProgress, RunServerErrors, RunJSON, RunNotice, RunAtRest, RunAnswerNotStreamed",
	"sessions":     "TestInertMatrixReadCommands",
	"show":         "TestInertMatrixReadCommands, AmbiguousPrefix",
	"log":          "TestInertMatrixReadCommands",
	"export":       "TestInertMatrixReadCommands",
	"rm":           "TestInertMatrixReadCommands",
	"rollback":     "TestInertMatrixDiffAndRollback",
	"diff":         "TestInertMatrixDiffAndRollback",
	"import":       "TestInertMatrixStoreCommands",
	"copy":         "TestInertMatrixStoreCommands",
	"memory":       "TestInertMatrixStoreCommands",
	"gc":           "TestInertMatrixStoreCommands",
	"compact":      "TestInertMatrixStoreCommands",
	"verify":       "TestInertMatrixStoreCommands",
	"recover":      "TestInertMatrixStoreCommands",
	"bench":        "TestInertEveryCommandsSinks (it prints only its own figures)",
	"model-server": "TestInertEveryCommandsSinks (it prints only its own address)",
	"":             "the interface's own matrix, tui.TestInertMatrix",
}

func TestInertMatrixNamesEveryCommand(t *testing.T) {
	named := map[string]bool{}
	for _, cmd := range append(commands, interactive) {
		named[cmd.name] = true
		if inertMatrix[cmd.name] == "" {
			t.Errorf("command %q is in no inertness matrix: feed it hostile text in a test and name the test in inertMatrix", cmd.name)
		}
	}
	for name := range inertMatrix {
		if !named[name] {
			t.Errorf("inertMatrix names %q, which is no command", name)
		}
	}
}

// nameGroups are the hostile classes a file name can hold (any byte but
// NUL and the slash), joined into as few names as fit 255 bytes: one
// name stands for many classes, so that a test over names runs a few
// times, not once a class.
func nameGroups() []inerttest.Class {
	var out []inerttest.Class
	cur := inerttest.Class{}
	for _, c := range inerttest.Classes {
		if strings.ContainsAny(c.Text, "\x00/") {
			continue
		}
		if len(cur.Text)+len(c.Text)+8 > 200 {
			out = append(out, cur)
			cur = inerttest.Class{}
		}
		cur.Name += c.Name + "; "
		cur.Text += "<" + c.Text + ">"
	}
	return append(out, cur)
}

// Every command of the table, run with a database, a workspace and
// arguments whose names are hostile, prints nothing a terminal acts on,
// on either sink: what a command prints goes through the sinks' inert
// writers, whichever command and however it prints.
func TestInertEveryCommandsSinks(t *testing.T) {
	for i, c := range nameGroups() {
		dir := filepath.Join(t.TempDir(), "dir:"+c.Text)
		db := filepath.Join(dir, "retrace.db")
		h := "arg:" + c.Text
		args := map[string][]string{
			"run":          {"--workspace", dir, "--base-url", "http://127.0.0.1:1/" + h, "--api-key", "k", h},
			"model-server": {"--addr", h},
			"bench":        {"--turns", "1", "--db", filepath.Join(dir, "bench.db")},
			"memory":       {"list"},
			"gc":           {"--older-than", "90d", "--dry-run"},
			"copy":         {"--to", filepath.Join(dir, "to.db")},
			"import":       {filepath.Join(dir, "x.json")},
			"recover":      {filepath.Join(dir, "new.db")},
			"":             {"--workspace", dir, h},
		}
		for _, cmd := range append(commands, interactive) {
			if cmd.name == "bench" && i > 0 {
				continue // it prints only its own figures: once is enough
			}
			line := []string{}
			if cmd.name != "" {
				line = append(line, cmd.name)
			}
			if a, ok := args[cmd.name]; ok {
				line = append(line, a...)
			} else {
				for range max(cmd.nargs, 0) {
					line = append(line, h)
				}
			}
			r := retrace(t, append(line, "--db", db)...)
			for _, sink := range []struct{ name, out string }{{"stdout", r.stdout}, {"stderr", r.stderr}} {
				if bad := inerttest.Problems(sink.out, "\n"); len(bad) != 0 {
					t.Errorf("retrace %s with %s: %s carries %v:\n%s", cmd.name, c.Name, sink.name, bad, sink.out)
				}
			}
		}
	}
}

// The commands that carry sessions between databases or look after one
// (copy, import, gc, compact, verify, recover) and the memory commands,
// on a store whose every text holds every class of hostile text: each
// prints it inert, and the memory commands show each class.
func TestInertMatrixStoreCommands(t *testing.T) {
	var all inerttest.Class
	for _, c := range inerttest.Classes {
		all.Text += "<" + c.Text + ">"
	}
	db, id := hostileStore(t, all)
	dir := t.TempDir()
	check := func(what string, r result) {
		t.Helper()
		checkText(t, what+" (stdout)", r.stdout, all, nil)
		checkText(t, what+" (stderr)", r.stderr, all, nil)
	}
	for i, c := range inerttest.Classes {
		check("memory add", retrace(t, "memory", "add", field(fmt.Sprintf("m%02d:", i), c), "--db", db).ok(t))
	}
	list := retrace(t, "memory", "--db", db).ok(t)
	check("memory", list)
	log := retrace(t, "memory", "log", "--db", db).ok(t)
	check("memory log", log)
	for i, c := range inerttest.Classes {
		tag := fmt.Sprintf("m%02d:", i)
		checkText(t, "memory", list.stdout, c, []shown{{lineWith(list.stdout, tag), tag, 0}})
		checkText(t, "memory log", log.stdout, c, []shown{{lineWith(log.stdout, tag), tag, 0}})
	}

	// The hostile workspace is no directory of this machine: copy and
	// import refuse it, naming it inert, and take one chosen here.
	refused := retrace(t, "copy", "--to", filepath.Join(dir, "refused.db"), "--db", db)
	if refused.code == exitOK {
		t.Fatalf("copy took the hostile workspace; stderr: %s", refused.stderr)
	}
	check("copy refused", refused)
	here := t.TempDir()
	check("copy", retrace(t, "copy", "--to", filepath.Join(dir, "copy.db"), "--workspace", here, "--db", db).ok(t))
	exported := filepath.Join(dir, "export.json")
	writeFile(t, exported, retrace(t, "export", id, "--db", db).ok(t).stdout)
	refused = retrace(t, "import", exported, "--db", filepath.Join(dir, "refused.db"))
	if refused.code == exitOK {
		t.Fatalf("import took the hostile workspace; stderr: %s", refused.stderr)
	}
	check("import refused", refused)
	check("import", retrace(t, "import", exported, "--workspace", here, "--db", filepath.Join(dir, "imported.db")).ok(t))
	check("gc --dry-run", retrace(t, "gc", "--older-than", "1d", "--dry-run", "--db", db).ok(t))
	check("verify", retrace(t, "verify", "--db", db).ok(t))
	check("recover", retrace(t, "recover", filepath.Join(dir, "recovered.db"), "--db", db).ok(t))
	check("gc", retrace(t, "gc", "--older-than", "1d", "--db", db).ok(t))
	check("compact", retrace(t, "compact", "--db", db).ok(t))
}

// retrace run prints the answer from the final state when nothing of it
// was streamed (the task's deltas never came to stdout): that answer is
// inert and shown too, whatever writer it is printed to.
func TestInertMatrixRunAnswerNotStreamed(t *testing.T) {
	for _, c := range inerttest.Classes {
		t.Run(c.Name, func(t *testing.T) {
			var out, errOut strings.Builder
			p := newProgress(&out, &errOut, false, state.New("s1"))
			done := state.State{SessionID: "s1", Version: 3, Phase: state.Done, FinalAnswer: field("answer:", c)}
			p.State(done)
			p.finish(done)
			checkText(t, "the answer on stdout", out.String(), c, []shown{{out.String(), "answer:", 0}})
			checkText(t, "the progress on stderr", errOut.String(), c, nil)
		})
	}
}
