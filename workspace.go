package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"retrace/agent/session"
	"retrace/agent/tools"
	"retrace/state/transcript"
	"retrace/storage"
)

// A resumed session works in the workspace it recorded, whichever
// directory the command is typed in: its files are there, and only there
// can a step back restore them. Every door that resumes one (-r, -c,
// run --session) opens it there and says so on stderr when that is not
// the current directory; one whose workspace is not a directory here is
// refused (the interface opens it read-only, to look). --workspace
// chooses where a new session begins, and may not move a resumed one.

// sessionWorkspace opens the workspace session id recorded. dir is
// --workspace: empty, or the same directory.
func sessionWorkspace(ctx context.Context, st storage.Store, id, dir string) (*tools.Workspace, storage.SessionInfo, error) {
	info, err := st.Session(ctx, id)
	if err != nil {
		return nil, info, err
	}
	ws, err := session.OpenWorkspace(info.Workspace)
	if err != nil {
		return nil, info, fmt.Errorf("session %s: %w ('retrace show %s' and 'retrace export %s' still read it)",
			session.Short(id), err, session.Short(id), session.Short(id))
	}
	if dir != "" {
		if other, err := tools.NewWorkspace(dir); err != nil || other.Root() != ws.Root() {
			return nil, info, usagef("session %s works in %s, and a session keeps the workspace it began in: leave out --workspace %s, which is for new sessions",
				session.Short(id), transcript.Inert(ws.Root()), shellQuote(dir))
		}
	}
	return ws, info, nil
}

// notHere says where a resumed session works, in a sentence that ends
// with what is done there, when that is not the current directory; ""
// when it is.
func notHere(id string, ws *tools.Workspace) string {
	if here, err := tools.NewWorkspace("."); err == nil && here.Root() == ws.Root() {
		return ""
	}
	return fmt.Sprintf("session %s works in %s, not in the current directory: ", session.Short(id), transcript.Inert(ws.Root()))
}

// resumedWorkspace is the workspace of session id, which the interface
// resumes: its own, said on stderr (and returned, for the interface to
// show) when that is not the current directory. One that is not a
// directory here is no workspace: the session opens read-only, to look,
// and look says so. A new session (id "") has none yet.
func resumedWorkspace(ctx context.Context, c *cli, st storage.Store, id, dir string) (ws *tools.Workspace, look string, err error) {
	if id == "" {
		return nil, "", nil
	}
	ws, info, err := sessionWorkspace(ctx, st, id, dir)
	switch {
	case errors.Is(err, session.ErrNoWorkspace):
		look = fmt.Sprintf("session %s works in %s, which is not a directory here: opened read-only, to look",
			session.Short(id), first(transcript.Inert(info.Workspace), "no directory it recorded"))
	case err != nil:
		return nil, "", err
	default:
		if say := notHere(id, ws); say != "" {
			look = say + "resumed there"
		}
	}
	if look != "" {
		fmt.Fprintln(c.stderr, look)
	}
	return ws, look, nil
}

// joinNotices is the notices that are set, in one line.
func joinNotices(notices ...string) string {
	var set []string
	for _, n := range notices {
		if n != "" {
			set = append(set, n)
		}
	}
	return strings.Join(set, " · ")
}
