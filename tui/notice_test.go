package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// A message too long for the status line is not cut: it takes lines of
// its own above it, wrapped, and gives them back when it goes.
func TestLongNoticesWrapAboveTheStatusLine(t *testing.T) {
	for _, size := range append(sizes, [2]int{160, 50}) {
		t.Run(sizeName(size), func(t *testing.T) {
			f := newFake(answeredSession()...)
			m := newModel(t, f, "dark", size[0], size[1])
			before := m.lay.mainH
			m.Update(restoredMsg{version: 2, session: f.info, head: f.head,
				files: Restored{Files: 3, Left: []string{"cmd/server/main.go", "internal/store/bolt.go", "README.md", "go.sum"}}})
			want := "restored v2 and 3 files; left as they were: cmd/server/main.go, internal/store/bolt.go, README.md and 1 more: " +
				"the next message starts a new branch; the old one stays in the timeline"
			if m.notice != want {
				t.Fatalf("notice %q", m.notice)
			}
			out := m.Render()
			checkScreen(t, out, size[0], size[1])
			if got := statusText(m); !strings.Contains(got, want) {
				t.Fatalf("the notice is not shown whole:\n%s", plain(out))
			}
			if rows := len(m.noticeRows()); rows == 0 || m.lay.mainH != before-rows {
				t.Fatalf("%d notice rows; the panes went from %d to %d rows", rows, before, m.lay.mainH)
			}
			pressKeys(t, m, "esc") // clears the notice
			checkScreen(t, m.Render(), size[0], size[1])
			if len(m.noticeRows()) != 0 || m.lay.mainH != before {
				t.Fatalf("the notice's rows stay after it went: %d rows, panes %d (were %d)", len(m.noticeRows()), m.lay.mainH, before)
			}
		})
	}
}

// A message longer than the rows it may take ends in … on the last of
// them; a paste's notice and a question are shown whole.
func TestNoticeRowsAreBounded(t *testing.T) {
	for _, size := range sizes {
		t.Run(sizeName(size), func(t *testing.T) {
			m := newModel(t, newFake(answeredSession()...), "dark", size[0], size[1])
			m.Update(TaskDoneMsg{Err: errTest(strings.Repeat("the server said something long ", 60))})
			rows := m.noticeRows()
			if len(rows) != maxNoticeRows || !strings.HasSuffix(strings.TrimRight(plain(rows[len(rows)-1]), " "), "…") {
				t.Fatalf("a very long error takes %d rows, the last %q", len(rows), plain(rows[len(rows)-1]))
			}
			checkScreen(t, m.Render(), size[0], size[1])
			m.errText = ""
			m.Update(tea.PasteMsg{Content: numberedLog(40213)})
			if got := statusText(m); !strings.Contains(got, m.notice) {
				t.Fatalf("the paste's notice is cut: %q", got)
			}
			m.Update(filesChangedMsg{version: 1, paths: []string{"a.go", "b.go", "c.go", "d.go"}})
			if got := statusText(m); !strings.Contains(got, m.confirm.question) {
				t.Fatalf("the question is cut: %q", got)
			}
			if got := plain(m.statusLine()); !strings.Contains(got, "y yes k keep the files") {
				t.Fatalf("the status line does not list the question's answers: %q", got)
			}
			checkScreen(t, m.Render(), size[0], size[1])
		})
	}
}

type errTest string

func (e errTest) Error() string { return string(e) }

// On the shortest screens a long message takes only the rows the panes
// and the status line leave, and the status line stays on screen.
func TestNoticeLeavesTheStatusLineOnShortScreens(t *testing.T) {
	for _, size := range [][2]int{{80, 7}, {80, 8}, {41, 10}, {80, 24}} {
		m := newModel(t, newFake(answeredSession()...), "dark", size[0], size[1])
		m.Update(TaskDoneMsg{Err: errTest(strings.Repeat("the server said something long ", 20))})
		out := m.Render()
		checkScreen(t, out, size[0], size[1])
		ls := lines(plain(out))
		if last := ls[len(ls)-1]; !strings.HasPrefix(last, "3f2a9c1b") {
			t.Fatalf("%v: the status line is off screen; the last line is %q", size, last)
		}
		if !strings.Contains(plain(out), "the server said") {
			t.Fatalf("%v: the error is nowhere:\n%s", size, plain(out))
		}
	}
}

// A notice that says what the task is doing (a summary under way, a
// retry's wait) goes when the task checkpoints or ends; one that tells
// the person something stays until they act.
func TestPassingNoticesEndWithWhatTheyDescribe(t *testing.T) {
	f := newFake(answeredSession()...)
	m := newModel(t, f, "dark", 120, 40)
	next := f.head
	next.Version++

	m.Update(NoticeMsg{Text: "summarising 12 older messages to fit the context window", Passing: true})
	if !strings.Contains(statusText(m), "summarising 12") {
		t.Fatalf("the summary under way is not shown: %q", statusText(m))
	}
	m.Update(StateMsg{State: next})
	if strings.Contains(statusText(m), "summarising") {
		t.Fatalf("the summary's notice outlived its checkpoint: %q", statusText(m))
	}

	m.Update(RetryMsg{Wait: 2e9, Attempt: 1, Of: 3, Reason: "the server is busy"})
	m.Update(TaskDoneMsg{Session: f.info, Head: next})
	if strings.Contains(statusText(m), "retrying") {
		t.Fatalf("the retry's notice outlived the task: %q", statusText(m))
	}

	m.Update(NoticeMsg{Text: "the reply was cut off at the token limit"})
	m.Update(StateMsg{State: next})
	m.Update(TaskDoneMsg{Session: f.info, Head: next})
	if !strings.Contains(statusText(m), "cut off at the token limit") {
		t.Fatalf("a lasting notice went with the task: %q", statusText(m))
	}

	// Said after the passing one, a lasting notice is not cleared by the
	// passing one's end.
	for _, later := range []tea.Msg{NoticeMsg{Text: "exported to /tmp/x.md"}, tea.PasteMsg{Content: numberedLog(40213)}} {
		m.Update(NoticeMsg{Text: "summarising 3 older messages", Passing: true})
		m.Update(later)
		said := m.notice
		m.Update(StateMsg{State: next})
		if m.notice != said || !strings.Contains(statusText(m), said) {
			t.Fatalf("after %T, a later notice went with the passing one: %q", later, statusText(m))
		}
	}
}
