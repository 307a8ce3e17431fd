package tui

import (
	"fmt"

	tea "charm.land/bubbletea/v2"

	"retrace/state/transcript"
)

// A session opens as it was left, and nothing of it acts by itself: a
// task it left mid-way waits for Ctrl+R (or is replaced by the next
// message, as `retrace run --session ID PROMPT` replaces it), and a
// restore of the workspace a stopped retrace left open is finished only
// when the user says so.

// opened tells what a session just shown left unfinished, and asks about
// an open restore.
func (m *Model) opened() tea.Cmd {
	if m.session.ReadOnly {
		return nil // the process writing it decides
	}
	if m.head.Restoring != nil {
		return m.askOpenRestore()
	}
	if m.head.Phase.Active() {
		m.notice = fmt.Sprintf("this session stopped in the middle of a task (%s): %s carries it on; a new message replaces it",
			m.head.Phase, legend(keymap.Chat.Retry))
	}
	return nil
}

// askOpenRestore asks what to do with the restore left open at the head:
// finish it (write its files), or leave every file as it is and move the
// head to the version it restored, as a restore that keeps the files
// does. Any other key leaves the question for later; the session takes
// no message until it is answered. It comes by itself, so keys typed as
// it opens answer nothing.
func (m *Model) askOpenRestore() tea.Cmd {
	r, target := m.head.Restoring, m.head.ParentVersion
	return m.askGuarded(confirmation{
		question: fmt.Sprintf("A restore of the workspace to v%d was left unfinished (%s; nothing written since). Finish it? y write them · k keep the files as they are · n later",
			target, transcript.Count(len(r.Files), "file")),
		yes:  m.finishRestore,
		keep: func() tea.Cmd { return m.restore(target, RestoreHow{KeepFiles: true}) },
	})
}

// finishRestore finishes the open restore; the panes show the head it
// ends at.
func (m *Model) finishRestore() tea.Cmd {
	target := m.head.ParentVersion
	return func() tea.Msg {
		done, err := m.d.FinishRestore()
		if err != nil {
			return errMsg{err}
		}
		info, head := m.d.Current()
		return restoredMsg{version: target, session: info, head: head, files: done}
	}
}
