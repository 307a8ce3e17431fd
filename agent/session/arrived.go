package session

import (
	"context"

	"retrace/state"
	"retrace/storage"
)

// foreignOf is the agent's Foreign for session id: read from its tree
// when the model calls remember, not on every open.
func foreignOf(ctx context.Context, st storage.Store, id string) func() bool {
	return func() bool { return arrived(ctx, st, id) }
}

// arrived reports a session that came from elsewhere, by an import or a
// copy: an imported checkpoint anywhere in its tree, since everything
// before it was recorded by someone else. A tree that cannot be read
// counts as arrived, so the doubt asks rather than trusts.
func arrived(ctx context.Context, st storage.Store, id string) bool {
	if id == "" {
		return false // a draft: nothing of it is stored yet
	}
	t, err := st.Tree(ctx, id)
	if err != nil {
		return true
	}
	for _, n := range t.Nodes {
		if n.Event == state.Imported {
			return true
		}
	}
	return false
}
