package tui

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"retrace/state"
	"retrace/themes"
)

// /remember keeps a memory for the session's project (or, with
// --everywhere, every project); /memory lists them with the settings in
// force and where each comes from, and d (after a question) removes the
// one selected.
func TestRememberAndTheMemoryView(t *testing.T) {
	f := newFake(answeredSession()...)
	f.info.Project = "/src/app"
	f.settings = []Setting{{Name: "model", Value: "gpt-test", From: "--model"}, {Name: "theme", Value: "dark", From: "default"}}
	m := newModel(t, f, "dark", 100, 30)

	typed(t, m, "/remember tests run with make check")
	typed(t, m, "/remember --everywhere call me Ada")
	if len(f.memories) != 2 || f.memories[0].Project != "/src/app" || f.memories[1].Project != "" {
		t.Fatalf("kept %+v", f.memories)
	}
	if !strings.Contains(m.notice, "remembered mem2 for every project") {
		t.Fatalf("notice %q", m.notice)
	}
	typed(t, m, "/remember call me Ada")
	if !strings.HasPrefix(m.notice, "already remembered as mem2 for every project; nothing new was kept") || len(f.memories) != 2 {
		t.Fatalf("a known memory again: notice %q, %d memories", m.notice, len(f.memories))
	}
	typed(t, m, "/remember")
	if m.notice != "usage: /remember [--everywhere] TEXT (what to remember)" || len(f.memories) != 2 {
		t.Fatalf("an empty /remember: notice %q, %d memories", m.notice, len(f.memories))
	}

	typed(t, m, "/memory")
	screen := screenOf(m)
	for _, want := range []string{"Memories (2)", "mem1 for this project", "tests run with make check", "mem2 for every project", "call me Ada",
		"Settings, and where each comes from", "model gpt-test (--model)", "theme dark (default)"} {
		if !strings.Contains(screen, want) {
			t.Fatalf("the memory view does not say %q:\n%s", want, screen)
		}
	}
	pressKeys(t, m, "down", "d")
	if m.confirm == nil || !strings.Contains(m.confirm.question, "Remove memory mem2") {
		t.Fatalf("d asked nothing, or not about mem2: %+v", m.confirm)
	}
	pressKeys(t, m, "y")
	if !slices.Equal(f.forgotten, []string{"mem2"}) || !strings.Contains(m.notice, "removed memory mem2") {
		t.Fatalf("forgotten %v, notice %q", f.forgotten, m.notice)
	}
	run(m, m.readMemories()) // the read the removal's answer asks for
	if screen := screenOf(m); !strings.Contains(screen, "Memories (1)") || strings.Contains(screen, "call me Ada") {
		t.Fatalf("the view after the removal:\n%s", screen)
	}
	pressKeys(t, m, "esc")
	if m.mode != modeChat || m.memories != nil {
		t.Fatalf("esc left mode %d", m.mode)
	}
}

// The Notes pane says which instruction files the session read, and how
// many memories its latest task was told.
func TestNotesSayWhatTheSessionWasTold(t *testing.T) {
	events := answeredSession()
	events[0].Briefing = &state.Briefing{
		Instructions: []state.InstructionFile{{Path: "/src/app/AGENTS.md", Tokens: 300}, {Path: "/src/app/web/CLAUDE.md", Tokens: 90, Truncated: true}},
		Memories:     []state.Memory{{ID: "m1", Text: "tabs", CreatedAt: t0, UpdatedAt: t0}},
	}
	m := newModel(t, newFake(events...), "dark", 170, 40)
	screen := screenOf(m)
	for _, want := range []string{"read app/AGENTS.md, web/CLAUDE.md (cut)", "remembers 1 (/memory)"} {
		if !strings.Contains(screen, want) {
			t.Fatalf("the Notes pane does not say %q:\n%s", want, screen)
		}
	}
}

// At an approval, p approves the call, allows the tool for the rest of
// the session, and keeps it for every session of the project through
// Options.SaveProjectTool; a failure to keep it says so.
func TestApproveForTheProject(t *testing.T) {
	f := newFake(answeredSession()...)
	p, err := themes.Get("dark")
	if err != nil {
		t.Fatal(err)
	}
	var saved []string
	m := New(f, Options{Palette: p, Now: func() time.Time { return t0 }, SaveProjectTool: func(tool string) error {
		saved = append(saved, tool)
		if len(saved) > 1 {
			return errors.New("the config is read-only")
		}
		return nil
	}})
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	for i, want := range []string{"run_command runs without asking in every session of this project", "not kept for the project: the config is read-only"} {
		m.Update(ApprovalMsg{Tool: "run_command", Summary: "run: go test ./...", Command: "go test ./..."})
		if !strings.Contains(screenOf(m), "in every session of this project") {
			t.Fatalf("the approval does not offer p:\n%s", screenOf(m))
		}
		later(m, approvalGuard)
		pressKeys(t, m, "p")
		if len(f.decided) != i+1 || f.decided[i] != (Decision{Approve: true, Always: true, Project: true}) {
			t.Fatalf("decided %+v", f.decided)
		}
		if !strings.Contains(m.notice, want) {
			t.Fatalf("notice %q, want %q", m.notice, want)
		}
	}
	if !slices.Equal(saved, []string{"run_command", "run_command"}) {
		t.Fatalf("saved %v", saved)
	}
}
