package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	tea "charm.land/bubbletea/v2"

	"retrace/agent/session"
	"retrace/agent/tools"
	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
	"retrace/themes"
	"retrace/tui"
)

// BenchmarkOpenToFirstFrame: what `retrace -r ID` does before the first
// frame of a 10,000-message session: open the database, load the head,
// build the interface and draw it once.
func BenchmarkOpenToFirstFrame(b *testing.B) {
	ctx := context.Background()
	db := filepath.Join(b.TempDir(), "retrace.db")
	st, err := boltstore.Open(db, boltstore.Options{})
	if err != nil {
		b.Fatal(err)
	}
	info, err := st.Create(ctx, storage.NewSession{Title: "long"})
	if err != nil {
		b.Fatal(err)
	}
	cur := storage.NewCursor(st, state.New(info.ID))
	for i := range 5_000 {
		for _, ev := range []state.Event{
			{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: fmt.Sprintf("question %d about the build", i)}}},
			{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: fmt.Sprintf("Answer %d: the **import** is wrong; run `go build`.", i)}}},
		} {
			if _, err := cur.Commit(ctx, ev); err != nil {
				b.Fatal(err)
			}
		}
	}
	st.Close()
	ws, err := tools.NewWorkspace(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	cfg := testConfig(b, "gpt-test", "http://127.0.0.1:1/v1", "")
	for b.Loop() {
		st, err := boltstore.Open(db, boltstore.Options{})
		if err != nil {
			b.Fatal(err)
		}
		ctrl := session.New(ctx, st, cfg.session(ws, nil, true, &demoModel{}))
		if err := ctrl.Open(info.ID); err != nil {
			b.Fatal(err)
		}
		m := tui.New(tuiDriver{ctrl: ctrl}, tui.Options{Palette: themes.Default()})
		m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
		_ = m.View()
		ctrl.Close()
		st.Close()
	}
}
