package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/BurntSushi/toml"

	"retrace/internal/powercut"
)

// configPlan is what the writer saves, in order: the theme and the tools
// allowed in a project, into a config file that does not exist yet, in a
// directory that does not either.
var configPlan = []struct {
	theme, tool string // one of the two
}{{theme: "dark"}, {tool: "run_command"}, {theme: "light"}, {tool: "edit_file"}}

const configProject = "/src/app"

// A saved setting is on disk when the save returns: a power cut at any
// moment leaves the config file whole, holding every setting saved
// before it (and perhaps the one being saved, never half of it), also
// when the save made the file's directory. Dropping the config's file or
// directory sync makes this test fail.
func TestPowerCutKeepsEverySavedSetting(t *testing.T) {
	path := os.Getenv("RETRACE_TEST_CONFIG")
	if powercut.Writing() {
		c := config{Path: path}
		for i, p := range configPlan {
			fmt.Printf("save %d\n", i)
			save := func() error { return c.saveTheme(p.theme) }
			if p.tool != "" {
				save = func() error { return c.saveProjectTool(configProject, p.tool) }
			}
			if err := save(); err != nil {
				t.Fatal(err)
			}
			fmt.Printf("saved %d\n", i)
		}
		return
	}
	seed := powercut.Seed(t)
	home := t.TempDir()
	path = filepath.Join(home, "config", "retrace", "config.toml")
	rec := powercut.Run(t, []string{"-test.run=^TestPowerCutKeepsEverySavedSetting$"}, "RETRACE_TEST_CONFIG="+path)
	saved := 0
	syncs, cuts := rec.Replay(t, home, seed, func(c *powercut.Cut, lines []string) {
		saved = checkConfigCut(t, c, path, seed, lines)
	})
	if saved != len(configPlan) {
		t.Fatalf("the writer acknowledged %d saves of %d:\n%s", saved, len(configPlan), rec.Stdout)
	}
	t.Logf("seed %d: %d syncs, %d power cuts checked, %d saves acknowledged, none lost", seed, syncs, cuts, saved)
}

// checkConfigCut checks the config a cut leaves against the saves
// acknowledged before it, and returns how many there were.
func checkConfigCut(t *testing.T, c *powercut.Cut, path string, seed uint64, lines []string) int {
	t.Helper()
	acked, begun := -1, -1
	for _, l := range lines {
		var i int
		if _, err := fmt.Sscanf(l, "saved %d", &i); err == nil {
			acked = i
		} else if _, err := fmt.Sscanf(l, "save %d", &i); err == nil {
			begun = i
		}
	}
	if acked < 0 {
		return 0
	}
	data, ok := c.File(path)
	if !ok {
		t.Fatalf("seed %d: a power cut before call %d leaves no config, though %d saves were acknowledged", seed, c.At, acked+1)
	}
	var fc fileConfig
	if _, err := toml.Decode(string(data), &fc); err != nil {
		t.Fatalf("seed %d: a power cut before call %d leaves a config that does not read: %v\n%q", seed, c.At, err, data)
	}
	if !configHolds(fc, acked) && !(begun > acked && configHolds(fc, begun)) {
		t.Fatalf("seed %d: a power cut before call %d leaves a config without save %d, which was acknowledged:\n%s", seed, c.At, acked, data)
	}
	return acked + 1
}

// configHolds reports whether fc holds exactly configPlan's saves up to
// and including the i-th.
func configHolds(fc fileConfig, i int) bool {
	theme, tools := "", []string(nil)
	for _, p := range configPlan[:i+1] {
		if p.tool != "" {
			tools = append(tools, p.tool)
		} else {
			theme = p.theme
		}
	}
	return fc.Theme == theme && slices.Equal(fc.Projects[configProject].AllowedTools, tools)
}
