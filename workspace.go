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

// opening is what the interface opens, and where.
type opening struct {
	id   string           // the session to resume; "" for a new one
	home *tools.Workspace // where a new session begins
	// there is where the resumed session works; nil when it has no
	// workspace here and opens read-only, to look.
	there *tools.Workspace
	said  string // what the person is told about it
}

// project is the directory whose project settings apply: the resumed
// session's workspace, or where a new session begins.
func (o opening) project() string {
	if o.there != nil {
		return o.there.Root()
	}
	return o.home.Root()
}

// toOpen finds what the interface opens: -r's session, -c's latest of
// the directory here (or of any with --all), or a new session here.
func (c *cli) toOpen(ctx context.Context, st storage.Store, f tuiFlags, cfg config) (opening, error) {
	var o opening
	var err error
	if o.home, err = openWorkspace(f.workspace, f.demo); err != nil {
		return o, err
	}
	if o.id, o.said, err = chooseSession(ctx, st, f, o.home.Root()); err != nil {
		return o, err
	}
	// A session that talks to the demo model resumes with it without
	// --demo, and /new begins in the demo's sample project.
	if !f.demo && talksToDemo(ctx, st, o.id, cfg) {
		if o.home, err = openWorkspace(f.workspace, true); err != nil {
			return o, err
		}
	}
	there, look, err := resumedWorkspace(ctx, c, st, o.id, f.workspace)
	o.there, o.said = there, first(o.said, look)
	return o, err
}
