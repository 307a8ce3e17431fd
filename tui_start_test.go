package main

import (
	"strings"
	"testing"
	"time"

	"retrace/agent/llmserver"
	"retrace/storage"
	"retrace/themes"
	"retrace/tui"
)

// openWith is the rig's open with the command line's start options.
func (r *tuiRig) openWith(start tui.Start, width, height int) *screenPump {
	r.t.Helper()
	m := tui.New(tuiDriver{ctrl: r.ctrl}, tui.Options{Palette: themes.Default(), Now: func() time.Time { return time.Unix(0, 0) }, Start: start})
	return newScreenPump(r.t, m, width, height)
}

// A new session opens on the welcome, which names the workspace the
// driver reports and the model; the first message takes it away.
func TestTUIWelcome(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		r := newTUIRig(t)
		// As `retrace` starts: a draft, written by its first message.
		if err := r.ctrl.Draft(storage.NewSession{}); err != nil {
			t.Fatal(err)
		}
		r.srv.Enqueue(llmserver.TextReply("Hello there."))
		p := r.openWith(tui.Start{Commands: []tui.ShellCommand{{Line: "retrace -c", Does: "continues the latest session"}}}, size[0], size[1])
		s := p.untilShown("retrace -c", "gpt-test")
		if ws := r.ws[len(r.ws)-20:]; !strings.Contains(s, ws) {
			t.Fatalf("%v: the welcome lacks the workspace %s:\n%s", size, r.ws, s)
		}
		p.send("hi")
		s = p.untilShown("Hello there.")
		if strings.Contains(s, "retrace -c") {
			t.Fatalf("%v: the welcome outlived the first message:\n%s", size, s)
		}
	}
}

// A prompt from the command line is the new session's first message,
// sent without a key pressed.
func TestTUIStartsWithThePrompt(t *testing.T) {
	r := newTUIRig(t)
	// As `retrace "fix the tests"` starts: a draft, which the prompt
	// writes.
	if err := r.ctrl.Draft(storage.NewSession{}); err != nil {
		t.Fatal(err)
	}
	r.srv.Enqueue(llmserver.TextReply("The tests pass now."))
	p := r.openWith(tui.Start{Prompt: "fix the tests"}, 120, 40)
	p.untilShown("fix the tests", "The tests pass now.")
	p.untilResting()
	id := r.ctrl.Info().Session.ID
	if id == "" {
		t.Fatal("the prompt did not write the draft")
	}
	head := r.head(id)
	if len(head.History) < 2 || head.History[len(head.History)-2].Content != "fix the tests" {
		t.Fatalf("the stored history: %+v", head.History)
	}
	if reqs := r.srv.Requests(); len(reqs) != 1 {
		t.Fatalf("%d requests, want the prompt's one", len(reqs))
	}
}
