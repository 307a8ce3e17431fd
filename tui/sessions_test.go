package tui

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"retrace/state"

	"retrace/state/transcript"
)

// unevenSessions have titles of every awkward kind: short, empty, wide
// runes, emoji, much longer than any screen, and with tabs and newlines.
func unevenSessions() []SessionInfo {
	titles := []string{
		"fix the build",
		"",
		"修复构建错误并更新所有的文档和测试用例以及发布说明",
		"🚀 ship the release 🎉 today, then tell everyone about it",
		strings.Repeat("a very long title that goes on ", 6),
		"tabs\tand\nnewlines in a title",
		"naïve café ünïcödé",
	}
	phases := []state.Phase{state.Done, state.Idle, state.AwaitingApproval, state.Error, state.Executing, state.Done, state.Reflecting}
	workspaces := []string{"/home/dev/src/greeter", "/home/dev/src/greeter", "/home/dev/" + strings.Repeat("deeply/nested/", 4) + "service",
		"/srv/工作/项目", "/home/dev/src/old", "", "/tmp/w"}
	out := make([]SessionInfo, len(titles))
	for i, title := range titles {
		out[i] = SessionInfo{ID: fmt.Sprintf("%02x%014x", i+0xa0, i), Title: title, Phase: phases[i], Workspace: workspaces[i],
			Versions: []int{1, 12, 140, 7, 1234, 3, 40}[i], Updated: time.Date(2026, 11, 22, 10-i, 0, 0, 0, time.Local), Busy: i == 3,
			NoWorkspace: i == 4 || i == 5}
	}
	return out
}

// cellOf is the cell at which sub starts in a plain line, or -1.
func cellOf(line, sub string) int {
	i := strings.Index(line, sub)
	if i < 0 {
		return -1
	}
	return ansi.StringWidth(line[:i])
}

// The sessions list keeps its columns where they are whatever the titles
// hold: every row's id, phase, version count and date start at the same
// cell, and every title too long for its column is cut at the same cell,
// with an ellipsis. Widths are counted in cells, so wide runes and emoji
// move nothing.
func TestSessionsListColumnsAlign(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		w, h := size[0], size[1]
		t.Run(fmt.Sprintf("%dx%d", w, h), func(t *testing.T) {
			f := newFake(answeredSession()...)
			f.sessions = unevenSessions()
			m := newModel(t, f, "dark", w, h)
			pressKeys(t, m, "ctrl+s")
			screen := screenOf(m)
			checkScreen(t, m.View().Content, w, h)
			var rows []string
			for _, l := range lines(screen) {
				for _, s := range f.sessions {
					if strings.Contains(l, short(s.ID)) {
						rows = append(rows, l)
					}
				}
			}
			if len(rows) != len(f.sessions) {
				t.Fatalf("%d rows of %d sessions:\n%s", len(rows), len(f.sessions), screen)
			}
			same := func(what string, at func(i int, row string) int) {
				t.Helper()
				want := -1
				for i, row := range rows {
					got := at(i, row)
					if got < 0 {
						t.Fatalf("no %s in row %q", what, row)
					}
					if want < 0 {
						want = got
					}
					if got != want {
						t.Fatalf("the %s of row %d starts at cell %d, row 1's at %d:\n%s", what, i+1, got, want, strings.Join(rows, "\n"))
					}
				}
			}
			same("id", func(i int, row string) int { return cellOf(row, short(f.sessions[i].ID)) })
			same("phase", func(i int, row string) int {
				return cellOf(row, strings.ReplaceAll(f.sessions[i].Phase.String(), "_", " "))
			})
			same("version count's end", func(i int, row string) int {
				v := transcript.Count(f.sessions[i].Versions, "version")
				return cellOf(row, v) + ansi.StringWidth(v)
			})
			same("date", func(i int, row string) int { return cellOf(row, f.sessions[i].Updated.Local().Format("2006-01-02")) })
			for i, row := range rows {
				end := filepath.Base(f.sessions[i].Workspace)
				if f.sessions[i].NoWorkspace {
					end = "(gone)"
				}
				if w >= 120 && !strings.Contains(row, end) {
					t.Fatalf("row %d does not show its workspace %q: %q", i+1, end, row)
				}
			}
			var cuts []int
			for i, row := range rows {
				if ansi.StringWidth(rows[i]) != w {
					t.Fatalf("row %d is %d cells wide", i+1, ansi.StringWidth(rows[i]))
				}
				title := strings.Join(strings.Fields(f.sessions[i].Title), " ")
				if title == "" || strings.Contains(row, title) {
					continue // shown whole
				}
				end := cellOf(row, "…") + 1
				if end == 0 {
					t.Fatalf("title %q is cut without an ellipsis: %q", title, row)
				}
				cuts = append(cuts, end)
			}
			if len(cuts) < 3 {
				t.Fatalf("%d titles were cut at %d cells, want 3 or more:\n%s", len(cuts), w, strings.Join(rows, "\n"))
			}
			// A wide rune that would straddle the column's end leaves its
			// cell empty, so a cut ends at the column's last cell or the
			// one before it.
			if lo, hi := slices.Min(cuts), slices.Max(cuts); hi-lo > 1 {
				t.Fatalf("titles are cut at cells %d to %d:\n%s", lo, hi, strings.Join(rows, "\n"))
			}
			// The dialog alone: the status line below it is not this test's.
			golden.RequireEqual(t, []byte(plain(strings.Join(m.mainLines(), "\n"))))
		})
	}
}

// A refusal in the sessions dialog (the session is in use by another
// process, say) is read before anything else is typed: the next key puts
// the notice away, and a letter goes no further, into the filter. Keys
// after it filter as ever.
func TestSessionsRefusalTakesTheNextKey(t *testing.T) {
	busy := errors.New("session 9b8c7d6e5f4a3b2c is in use by another retrace process (pid 4242); open it read-only or close it there first")
	for name, refuse := range map[string]func(*testing.T, *fakeDriver, *Model){
		"delete": func(t *testing.T, f *fakeDriver, m *Model) {
			f.deleteErr = busy
			pressKeys(t, m, "down", "d", "y")
		},
		"open": func(t *testing.T, f *fakeDriver, m *Model) {
			f.openErr = busy
			pressKeys(t, m, "down", "enter")
		},
	} {
		for _, size := range [][2]int{{80, 24}, {120, 40}} {
			t.Run(fmt.Sprintf("%s/%dx%d", name, size[0], size[1]), func(t *testing.T) {
				f := newFake(answeredSession()...)
				m := newModel(t, f, "dark", size[0], size[1])
				pressKeys(t, m, "ctrl+s")
				refuse(t, f, m)
				if s := statusText(m); m.mode != modeSessions || !strings.Contains(s, "error: session 9b8c") {
					t.Fatalf("the refusal is not shown in the dialog (mode %v): %q", m.mode, s)
				}
				pressKeys(t, m, "x")
				if m.sessions.filter != "" || len(m.sessions.visible()) != 2 || strings.Contains(statusText(m), "error: session 9b8c") {
					t.Fatalf("after the refusal a key typed %q into the filter (status %q)", m.sessions.filter, statusText(m))
				}
				pressKeys(t, m, "o", "t")
				if m.sessions.filter != "ot" {
					t.Fatalf("later keys filter %q, want %q", m.sessions.filter, "ot")
				}
				checkScreen(t, m.View().Content, size[0], size[1])
			})
		}
	}
}

// A new session has no id until its first message writes it: the status
// line calls it new, and takes up the id, the title and the versions the
// first task reports.
func TestNewSessionTakesItsIDFromTheFirstMessage(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			f := newFake()
			f.info, f.head = SessionInfo{Model: "gpt-test", Window: 128000}, state.New("")
			m := newModel(t, f, "dark", size[0], size[1])
			if s := statusText(m); !strings.HasPrefix(s, "new v0/0 ") {
				t.Fatalf("a new session's status line: %q", s)
			}
			typed(t, m, "hello there")
			written := f.info
			written.ID, written.Title, written.Versions, written.Head = "5e55104e0123abcd", "hello there", 2, 2
			first := state.New(written.ID)
			first.Version = 1
			m.Update(StateMsg{State: first})
			done := first
			done.Version, done.Phase = 2, state.Done
			m.Update(TaskDoneMsg{Session: written, Head: done})
			s := statusText(m)
			want := "5e55104e hello there v2/2 "
			if size[0] == 80 {
				want = "5e55104e v2/2 " // the title is the first thing a narrow status line drops
			}
			if !strings.HasPrefix(s, want) || m.running {
				t.Fatalf("after the first message the status line is %q (running %v)", s, m.running)
			}
			checkScreen(t, m.View().Content, size[0], size[1])
		})
	}
}

// A first task that ends before its first checkpoint (the store refused
// it) still hands the new session its id: the controller wrote the
// session, and the status line must not go on calling it new.
func TestNewSessionTakesItsIDWithoutACheckpoint(t *testing.T) {
	f := newFake()
	f.info, f.head = SessionInfo{Model: "gpt-test", Window: 128000}, state.New("")
	m := newModel(t, f, "dark", 120, 40)
	typed(t, m, "hello there")
	written := f.info
	written.ID, written.Title = "5e55104e0123abcd", "hello there"
	m.Update(TaskDoneMsg{Err: errors.New("disk full"), Session: written, Head: state.New(written.ID)})
	if s := statusText(m); !strings.HasPrefix(s, "5e55104e hello there v0/0 ") {
		t.Fatalf("after a first task with no checkpoint the status line is %q", s)
	}
}

// What is typed right after Ctrl+S, before the list is read, filters the
// list rather than landing in the message, and an Enter typed meanwhile
// opens the first match once the list comes; nothing is sent.
func TestTypingBeforeTheSessionsAreRead(t *testing.T) {
	f := newFake(answeredSession()...)
	f.sessions = []SessionInfo{{ID: "aaaa000011112222", Title: "first"}, {ID: "bbbb000011112222", Title: "second"}}
	m := newModel(t, f, "dark", 100, 30)
	_, read := m.Update(keyPress(t, "ctrl+s"))
	for _, r := range "bbbb" {
		m.Update(keyMsg(string(r)))
	}
	_, enter := m.Update(keyPress(t, "enter"))
	run(m, enter)
	if len(f.submitted) != 0 || m.input.Value() != "" {
		t.Fatalf("the keys went to the message: sent %q, draft %q", f.submitted, m.input.Value())
	}
	if !strings.Contains(screenOf(m), "reading the sessions…") || !strings.Contains(screenOf(m), "filter: bbbb") {
		t.Fatalf("while reading:\n%s", screenOf(m))
	}
	msg := read()
	_, open := m.Update(msg)
	run(m, open)
	if len(f.opened) != 1 || f.opened[0] != "bbbb000011112222" {
		t.Fatalf("opened %v", f.opened)
	}
}

// A dialog closed before its list came (Esc, or n starting a session)
// stays closed when the list comes.
func TestALateListDoesNotReopenTheDialog(t *testing.T) {
	for _, key := range []string{"esc", "n"} {
		f := newFake(answeredSession()...)
		f.sessions = []SessionInfo{{ID: "aaaa000011112222", Title: "first"}}
		m := newModel(t, f, "dark", 100, 30)
		_, read := m.Update(keyPress(t, "ctrl+s"))
		_, cmd := m.Update(keyPress(t, key))
		run(m, cmd)
		if m.mode != modeChat {
			t.Fatalf("%s did not close the dialog", key)
		}
		m.Update(read())
		if m.mode != modeChat || strings.Contains(screenOf(m), "type to filter") {
			t.Fatalf("after %s, the late list opened the dialog again:\n%s", key, screenOf(m))
		}
	}
}
