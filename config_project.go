package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"

	"retrace/agent/instructions"
	"retrace/tui"
)

// Preferences per project (issue 17). A project's own file,
// .retrace/config.toml in its repository root, is shared with everyone
// who clones it, so it may set only what cannot hurt them: the model,
// the theme, the context window and the iteration limit. Where the key is
// sent (base_url, api_key_env), which tools run without asking and how
// commands are confined stay the person's: a repository must not be able
// to send their key elsewhere or approve its own commands. What the
// person allows for one project is kept in their own config, under
// [projects."ROOT"].

// projectFile is a project's .retrace/config.toml.
type projectFile struct {
	Model         string `toml:"model"`
	Theme         string `toml:"theme"`
	ContextWindow int    `toml:"context_window"`
	MaxIterations int    `toml:"max_iterations"`
}

// projectPrefs is what the person's own config keeps for one project.
type projectPrefs struct {
	// AllowedTools run without asking in every session of the project:
	// what "always, in this project" at an approval saved.
	AllowedTools []string `toml:"allowed_tools"`
}

// The bounds on what a project's own file may set.
const (
	minProjectWindow     = 4096
	maxProjectIterations = 100
)

// projectConfigPath is where a project's own settings are.
func projectConfigPath(root string) string { return filepath.Join(root, ".retrace", "config.toml") }

// forProject applies the settings of the project workspace is in: its
// own file's, under the flags and the environment and over the person's
// config, and the tools the person allowed there. Explicit flags say
// which settings a flag set (those a project file does not change).
func (c *config) forProject(workspace string, m modelFlags, themeFlag string) error {
	root := instructions.ProjectRoot(workspace)
	c.Project = root
	if prefs, ok := c.projects[root]; ok && len(prefs.AllowedTools) > 0 {
		for _, t := range prefs.AllowedTools {
			if !slices.Contains(c.AllowedTools, t) {
				c.AllowedTools = append(c.AllowedTools, t)
			}
		}
		c.From["allowed_tools"] = "config " + c.Path + ", for this project"
	}
	path := projectConfigPath(root)
	var pf projectFile
	md, err := decodeConfig(path, &pf)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		// The file came with the repository: what is wrong with it is
		// said, and the person's own settings stand. A broken file in a
		// clone must not stop retrace from working there.
		c.Warnings = append(c.Warnings, fmt.Sprintf("project config %s is not used: %s", path, oneLine(err.Error())))
		c.projectWarning = "project config: not used (" + oneLine(err.Error()) + ")"
		return nil
	}
	if keys := md.Undecoded(); len(keys) > 0 {
		var names []string
		for _, k := range keys {
			if q := strconv.Quote(k[0]); !slices.Contains(names, q) {
				names = append(names, q) // a table's keys go with the table
			}
		}
		c.Warnings = append(c.Warnings, fmt.Sprintf("project config %s: %s not taken from a project's file (only model, theme, context_window and max_iterations are: a repository may not choose where your key goes, which tools run without asking, or how commands are confined)", path, strings.Join(names, ", ")))
		c.projectWarning = "project config: ignored " + strings.Join(names, ", ") + " (not a project's to set)"
	}
	from := "project config " + path
	if pf.Model != "" && c.explicit.Model == "" {
		c.fallback.Model = pf.Model
		c.Model = c.endpointOf(c.fallback).Model
		c.From["model"] = from
	}
	if pf.Theme != "" && themeFlag == "" {
		c.Theme, c.From["theme"] = pf.Theme, from
	}
	// A repository may tune these, within bounds: a clone must not make
	// a task run for ever on the person's bill, or summarise at every turn.
	switch {
	case pf.ContextWindow == 0 || m.contextWindow != 0:
	case pf.ContextWindow < minProjectWindow:
		c.Warnings = append(c.Warnings, fmt.Sprintf("project config %s: context_window = %d is not used: a project's file may set %d or more", path, pf.ContextWindow, minProjectWindow))
	default:
		c.ContextWindow, c.From["context_window"] = pf.ContextWindow, from
	}
	switch {
	case pf.MaxIterations == 0 || m.maxIterations != 0:
	case pf.MaxIterations < 0 || pf.MaxIterations > maxProjectIterations:
		c.Warnings = append(c.Warnings, fmt.Sprintf("project config %s: max_iterations = %d is not used: a project's file may set 1 to %d (your own config or --max-iterations may set more)", path, pf.MaxIterations, maxProjectIterations))
	default:
		c.MaxIterations, c.From["max_iterations"] = pf.MaxIterations, from
	}
	return c.validate()
}

// forProject is config.forProject for a command, saying its warnings on
// stderr as loadConfig does.
func (c *cli) forProject(cfg *config, workspace string, m modelFlags, themeFlag string) error {
	n := len(cfg.Warnings)
	err := cfg.forProject(workspace, m, themeFlag)
	for _, w := range cfg.Warnings[n:] {
		fmt.Fprintf(c.stderr, "warning: %s\n", w)
	}
	return err
}

// allowedIn lists the tools that run without asking in a session of
// project: those allowed everywhere, and those allowed for that project.
func (c config) allowedIn(project string) []string {
	out := slices.Clone(c.everywhere)
	for _, t := range c.projects[project].AllowedTools {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// saveProjectTool keeps tool among the tools that run without asking in
// every session of project, in the person's config under
// [projects."ROOT"], and leaves the rest of the file as it was. The file
// is written only when it reads back with the tool there.
func (c config) saveProjectTool(project, tool string) error {
	if c.Path == "" {
		return errors.New("no place for a config file: set XDG_CONFIG_HOME or HOME")
	}
	old, err := readConfig(c.Path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("config %s: %w", c.Path, err)
	}
	var fc fileConfig
	if _, err := toml.Decode(string(old), &fc); err != nil {
		return fmt.Errorf("config %s: %s", c.Path, oneLine(err.Error()))
	}
	tools := fc.Projects[project].AllowedTools
	if slices.Contains(tools, tool) {
		return nil
	}
	tools = append(slices.Clone(tools), tool)
	next := withProjectTools(old, project, tools)
	var check fileConfig
	if _, err := toml.Decode(string(next), &check); err != nil || !slices.Contains(check.Projects[project].AllowedTools, tool) {
		return fmt.Errorf("config %s: cannot write the project %s into it (%v); add it by hand", c.Path, project, err)
	}
	return replaceConfig(c.Path, next)
}

// livePrefs are the settings of a running interface, which /theme and an
// approval "in every session of this project" change while the
// interface reads them for /memory, from other goroutines.
type livePrefs struct {
	mu  sync.Mutex
	cfg config
}

func (p *livePrefs) settings() []tui.Setting {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg.settings()
}

func (p *livePrefs) saveTheme(name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.cfg.saveTheme(name); err != nil {
		return err
	}
	p.cfg.Theme, p.cfg.From["theme"] = name, "config "+p.cfg.Path
	return nil
}

// saveProjectTool keeps tool among those that run without asking in
// project, the open session's, which may be another than the one the
// interface was started in.
func (p *livePrefs) saveProjectTool(project, tool string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.cfg.saveProjectTool(project, tool); err != nil {
		return err
	}
	if project != p.cfg.Project {
		return nil // the settings shown are the start's project's
	}
	if !slices.Contains(p.cfg.AllowedTools, tool) {
		p.cfg.AllowedTools = append(slices.Clone(p.cfg.AllowedTools), tool)
	}
	p.cfg.From["allowed_tools"] = "config " + p.cfg.Path + ", for this project"
	return nil
}

// withProjectTools is the config file text with the project's table
// holding allowed_tools = tools: the line replaced in the table when it
// is there, added under the table's header when only the header is,
// and the table added at the end otherwise.
func withProjectTools(text []byte, project string, tools []string) []byte {
	quoted := make([]string, len(tools))
	for i, t := range tools {
		quoted[i] = strconv.Quote(t)
	}
	line := "allowed_tools = [" + strings.Join(quoted, ", ") + "]"
	header := "[projects." + strconv.Quote(project) + "]"
	lines := strings.Split(string(text), "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != header {
			continue
		}
		for j := i + 1; j < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[j]), "["); j++ {
			if k, _, ok := strings.Cut(lines[j], "="); ok && strings.TrimSpace(k) == "allowed_tools" {
				lines[j] = line
				return []byte(strings.Join(lines, "\n"))
			}
		}
		lines = slices.Insert(lines, i+1, line)
		return []byte(strings.Join(lines, "\n"))
	}
	out := bytes.TrimRight(text, "\n")
	if len(out) > 0 {
		out = append(out, "\n\n"...)
	}
	return append(out, header+"\n"+line+"\n"...)
}
