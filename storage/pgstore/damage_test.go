package pgstore_test

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"retrace/state"
	"retrace/state/statetest"
	"retrace/storage"
	"retrace/storage/pgstore"
	"retrace/storage/storetest"
)

var ctx = context.Background()

// script commits n scripted events to a new session and returns its id.
func script(t *testing.T, st storage.Store, n int) string {
	t.Helper()
	info, err := st.Create(ctx, storage.NewSession{Title: "damage", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	s := state.New(info.ID)
	for range n {
		if s, err = storage.Commit(ctx, st, s, storetest.WithContents(statetest.NextEvent(rng, s))); err != nil {
			t.Fatalf("commit at v%d: %v", s.Version, err)
		}
	}
	return info.ID
}

// corruptAt checks err is a CorruptError naming the session and version.
func corruptAt(t *testing.T, what string, err error, id string, v int) {
	t.Helper()
	var ce *storage.CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, storage.ErrCorrupt) || ce.Session != id || ce.Version != v {
		t.Fatalf("%s: %v; want a CorruptError naming session %s version %d", what, err, id, v)
	}
}

// A byte of an event changed behind the store's back (through SQL, by a
// tool or a disk) is damage the checksum finds on every read of it, and
// the error names the session and the version.
func TestDamagedEventIsCorrupt(t *testing.T) {
	loc := newDatabase(t)
	st := openPG(t, loc, pgstore.Options{})
	id := script(t, st, 12)
	sql(t, loc, `UPDATE retrace_checkpoints SET body = set_byte(body, 0, get_byte(body, 0) # 1)
		WHERE session_id = $1 AND version = 5 AND length(body) > 0`, id)
	_, err := st.Head(ctx, id)
	corruptAt(t, "head over a damaged v5", err, id, 5)
	_, err = st.At(ctx, id, 7)
	corruptAt(t, "v7 over a damaged v5", err, id, 5)
	_, err = st.Export(ctx, id)
	corruptAt(t, "export", err, id, 5)
	if _, err := st.At(ctx, id, 4); err != nil {
		t.Fatalf("v4 does not read v5: %v", err)
	}
	// The tree reads headers only, and v5's header is whole.
	if _, err := st.Tree(ctx, id); err != nil {
		t.Fatalf("tree over a damaged event: %v", err)
	}

	// A change that still decodes (one letter of a message for another)
	// is found by the checksum alone.
	info, err := st.Create(ctx, storage.NewSession{Title: "words"})
	if err != nil {
		t.Fatal(err)
	}
	ev := state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "please keep this message whole"}}}
	if _, err := storage.Commit(ctx, st, state.New(info.ID), ev); err != nil {
		t.Fatal(err)
	}
	sql(t, loc, `UPDATE retrace_checkpoints
		SET body = decode(replace(encode(body, 'hex'), encode('whole', 'hex'), encode('wholf', 'hex')), 'hex')
		WHERE session_id = $1 AND version = 1`, info.ID)
	_, err = st.Head(ctx, info.ID)
	corruptAt(t, "head over a message changed by one letter", err, info.ID, 1)
}

// A header column changed is damage the tree finds without reading any
// event, and so is a row moved under another version.
func TestDamagedHeaderIsCorrupt(t *testing.T) {
	loc := newDatabase(t)
	st := openPG(t, loc, pgstore.Options{})
	id := script(t, st, 12)
	sql(t, loc, `UPDATE retrace_checkpoints SET phase = 'done' WHERE session_id = $1 AND version = 3 AND phase <> 'done'`, id)
	_, err := st.Tree(ctx, id)
	corruptAt(t, "tree with v3's phase changed", err, id, 3)
	_, err = st.Head(ctx, id)
	corruptAt(t, "head with v3's phase changed", err, id, 3)

	other := script(t, st, 6)
	sql(t, loc, `UPDATE retrace_checkpoints SET parent = 1 WHERE session_id = $1 AND version = 4`, other)
	_, err = st.At(ctx, other, 6)
	corruptAt(t, "v6 with v4's parent changed", err, other, 4)
}

// A session's row changed is damage too, named by the session.
func TestDamagedSessionIsCorrupt(t *testing.T) {
	loc := newDatabase(t)
	st := openPG(t, loc, pgstore.Options{})
	id := script(t, st, 3)
	sql(t, loc, `UPDATE retrace_sessions SET head = 1 WHERE id = $1`, id)
	_, err := st.Session(ctx, id)
	corruptAt(t, "session with its head changed", err, id, 0)
	_, err = st.Append(ctx, id, 1, state.Event{Kind: state.NoteSet, NoteKey: "k", NoteValue: "v"})
	corruptAt(t, "append to a damaged session", err, id, 0)
}

// A content changed is damage named by its digest, never its bytes.
func TestDamagedBlobIsCorrupt(t *testing.T) {
	loc := newDatabase(t)
	st := openPG(t, loc, pgstore.Options{})
	script(t, st, 40)
	var digest string
	conn := connect(t, loc)
	if err := conn.QueryRow(ctx, "SELECT digest FROM retrace_blobs ORDER BY digest LIMIT 1").Scan(&digest); err != nil {
		t.Fatalf("no content kept: %v", err)
	}
	sql(t, loc, `UPDATE retrace_blobs SET data = data || '\x0a'::bytea WHERE digest = $1`, digest)
	_, err := st.Blob(ctx, digest)
	var ce *storage.CorruptError
	if !errors.As(err, &ce) || ce.Blob != digest {
		t.Fatalf("damaged content: %v; want a CorruptError naming %s", err, digest)
	}
	var copied bytes.Buffer
	if err := st.CopyBlob(ctx, digest, &copied); !errors.As(err, &ce) || ce.Blob != digest || copied.Len() > 0 {
		t.Fatalf("copy of a damaged content: %v, %d bytes written; want a CorruptError naming %s and nothing", err, copied.Len(), digest)
	}
}

// Check reads everything: sound, it counts what it read; a damaged event,
// header or content anywhere is found and named.
func TestCheckFindsDamageAnywhere(t *testing.T) {
	for _, c := range []struct {
		name, damage string
		version      int
		says         string
	}{
		{"a flipped byte of an event", `UPDATE retrace_checkpoints SET body = set_byte(body, 0, get_byte(body, 0) # 1) WHERE session_id = $1 AND version = 5 AND length(body) > 0`, 5, "checksum"},
		{"a header's phase", `UPDATE retrace_checkpoints SET phase = 'done' WHERE session_id = $1 AND version = 3`, 3, "checksum"},
		{"a content's bytes", `UPDATE retrace_blobs SET data = set_byte(data, 0, get_byte(data, 0) # 1) WHERE $1 <> '' AND length(data) > 0`, -1, "sha256:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			loc := newDatabase(t)
			st := openPG(t, loc, pgstore.Options{})
			id := script(t, st, 40)
			rep, err := st.Check(ctx)
			if err != nil || rep.Sessions != 1 || rep.Checkpoints != 40 || rep.Contents == 0 || rep.Bytes == 0 {
				t.Fatalf("a sound database: %+v, %v", rep, err)
			}
			sql(t, loc, c.damage, id)
			_, err = st.Check(ctx)
			var ce *storage.CorruptError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("check after %s: %v", c.name, err)
			}
			if c.version > 0 && (ce.Session != id || ce.Version != c.version) {
				t.Errorf("check names session %q v%d, want %s v%d", ce.Session, ce.Version, id, c.version)
			}
		})
	}
}
