package main

import (
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"retrace/tui"
)

// pump is the program's event loop run by hand: Update and View only on
// the caller's goroutine, every command on a goroutine of its own, its
// message handed back. `bench --sessions` measures the interface through
// it in its child processes, and the tests drive the interface with it.
type pump struct {
	m    *tui.Model
	msgs chan tea.Msg
	stop chan struct{}
	// seen, when set, is told of every message before the model is.
	seen func(tea.Msg)
}

func newPump(m *tui.Model) *pump {
	return &pump{m: m, msgs: make(chan tea.Msg, 64), stop: make(chan struct{})}
}

// close ends the hand-back of messages still to come.
func (p *pump) close() { close(p.stop) }

// do runs a command as the program would.
func (p *pump) do(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	go func() {
		msg := cmd()
		if msg == nil {
			return
		}
		select {
		case p.msgs <- msg:
		case <-p.stop:
		}
	}()
}

func (p *pump) handle(msg tea.Msg) {
	if batch, ok := msg.(tea.BatchMsg); ok {
		for _, c := range batch {
			p.do(c)
		}
		return
	}
	if p.seen != nil {
		p.seen(msg)
	}
	_, cmd := p.m.Update(msg)
	p.do(cmd)
}

func (p *pump) screen() string { return ansi.Strip(p.m.View().Content) }

// waitFor handles messages until cond holds for the screen, and returns
// that screen; after patience it gives up, returning the screen as it is
// and false.
func (p *pump) waitFor(patience time.Duration, cond func(screen string) bool) (string, bool) {
	deadline := time.NewTimer(patience)
	defer deadline.Stop()
	for {
		s := p.screen()
		if cond(s) {
			return s, true
		}
		select {
		case msg := <-p.msgs:
			p.handle(msg)
		case <-deadline.C:
			return s, false
		}
	}
}
