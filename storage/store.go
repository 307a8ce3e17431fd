package storage

import (
	"context"
	"slices"
	"strings"
	"time"

	"retrace/state"
)

// Store keeps sessions and their checkpoints. Implementations are safe for
// use by several goroutines.
type Store interface {
	// Create starts a new, empty session (head 0) and claims it.
	Create(ctx context.Context, s NewSession) (SessionInfo, error)
	// Append keeps ev as a new checkpoint under parent, which must be the
	// session's head, and moves the head to it. When Append returns nil the
	// checkpoint is durable. A parent other than the head is an
	// *ConflictError: someone else moved the session on.
	//
	// The file contents ev.Files refer to travel in ev.Blobs. Append keeps
	// those the store does not hold yet in the checkpoint's own
	// transaction, so a checkpoint is never durable without the contents
	// it refers to, and a refused Append keeps no content either. A blob
	// whose data does not hash to its digest is refused (ErrInvalid), and
	// so is an event that refers to a digest it neither carries nor the
	// store holds (ErrBlobNotFound): a checkpoint never refers to content
	// nobody kept. The stored event never includes Blobs.
	Append(ctx context.Context, id string, parent int, ev state.Event) (Checkpoint, error)
	// Blob returns the file content with the given digest, checked against
	// the digest on every read: a mismatch is a *CorruptError naming the
	// digest, never the content. ErrBlobNotFound when the store holds no
	// such content; ErrInvalid when digest is not "sha256:" and 64
	// lowercase hex digits.
	//
	// Contents are addressed by their digest alone and shared by every
	// version and session that refers to them, so deleting a session
	// leaves them in place: another session may share them. Taking back
	// the space of contents nothing refers to any more is a garbage
	// collection a person runs (boltstore's GC).
	Blob(ctx context.Context, digest string) ([]byte, error)
	// Head returns the state at the session's head.
	Head(ctx context.Context, id string) (state.State, error)
	// At returns the state at any version, 0 being the empty session.
	At(ctx context.Context, id string, version int) (state.State, error)
	// Recent returns the state at a version with only the recent part of
	// its history (state.State.Window): every message its summary does not
	// cover, and at least the last keep messages. It is what going on
	// with a session needs, and a store may load it without reading the
	// whole session; everything but the left-out messages and tool calls
	// is as At returns it.
	Recent(ctx context.Context, id string, version, keep int) (state.State, error)
	// Tree returns every version's metadata and the branches they form,
	// without materializing any state.
	Tree(ctx context.Context, id string) (Tree, error)
	// Fork keeps ev as a new checkpoint under parent, any version, and
	// moves the head to it, in one step: a rollback that records something
	// at once (a restore of the workspace) is never half done, with the
	// head moved and the record missing.
	Fork(ctx context.Context, id string, parent int, ev state.Event) (Checkpoint, error)
	// SetHead moves the head to version (rollback). The next Append starts
	// a new branch there; no version is removed.
	SetHead(ctx context.Context, id string, version int) error
	// Session returns one session's summary.
	Session(ctx context.Context, id string) (SessionInfo, error)
	// Sessions lists every session, the most recently updated first.
	Sessions(ctx context.Context) ([]SessionInfo, error)
	// Resolve returns the id of the one session whose id starts with
	// prefix: ErrSessionNotFound when none does, an *AmbiguousError when
	// several do.
	Resolve(ctx context.Context, prefix string) (string, error)
	// Rename sets a session's title.
	Rename(ctx context.Context, id, title string) error
	// Delete removes a session and all its versions. The file contents
	// its versions refer to stay (see Blob).
	Delete(ctx context.Context, id string) error
	// Export returns a session with every checkpoint and its event, and
	// every file content those events refer to, in memory: a copy to
	// another store. An export to a file writes as it reads instead
	// (WriteExport, through Exporter).
	Export(ctx context.Context, id string) (Export, error)
	// Import keeps what Export returned, in this store or another: the
	// session under its own id (a fresh one when ex.Session.ID is empty),
	// every checkpoint and every file content, and returns the session's
	// summary. The export is checked whole first (CheckImport): anything
	// wrong is an error wrapping ErrInvalid and nothing is kept. A store
	// that holds the id already refuses with ErrSessionExists. The session
	// becomes visible complete or not at all, however many transactions a
	// backend takes to write it.
	Import(ctx context.Context, ex Export) (SessionInfo, error)
	// Claim makes this store the session's only writer until Release or
	// Close. It is a *BusyError when another store holds the session.
	Claim(ctx context.Context, id string) error
	// Release gives up a claim. Releasing a session not claimed is a no-op.
	Release(id string) error
	// Close releases every claim and the store's resources.
	Close() error

	Exporter
	MemoryLog
}

// KeepRecent is how many of a session's latest messages its state holds
// at least when it is opened to go on with (Latest): a screenful and more.
// Whatever the summary does not cover is held too; the older messages are
// read when they are shown.
const KeepRecent = 200

// Latest is the recent part of a session's head (Store.Recent keeping
// keep messages). The head is read first, in a transaction of its own:
// a caller that does not hold the session may get a version another
// store has moved on from since.
func Latest(ctx context.Context, st Store, id string, keep int) (state.State, error) {
	info, err := st.Session(ctx, id)
	if err != nil {
		return state.State{}, err
	}
	return st.Recent(ctx, id, info.Head, keep)
}

// NewSession describes a session to create.
type NewSession struct {
	Title     string
	Model     string
	Workspace string
	CreatedAt time.Time
}

// SessionInfo summarizes a session.
type SessionInfo struct {
	ID        string      `json:"id"`
	Title     string      `json:"title"`
	Model     string      `json:"model"`
	Workspace string      `json:"workspace"`
	CreatedAt time.Time   `json:"created_at"`
	UpdatedAt time.Time   `json:"updated_at"`
	Head      int         `json:"head"`
	Versions  int         `json:"versions"` // versions are 1..Versions, but for those gc removed
	Phase     state.Phase `json:"phase"`    // at the head
}

// Checkpoint is one version's metadata.
type Checkpoint struct {
	Version int             `json:"version"`
	Parent  int             `json:"parent"`
	Event   state.EventKind `json:"event"`
	Phase   state.Phase     `json:"phase"` // after the event
	At      time.Time       `json:"at"`
}

// Record is a checkpoint with its event, as Export returns it.
type Record struct {
	Checkpoint
	Data state.Event `json:"data"`
}

// Export is everything a store holds about one session.
type Export struct {
	Session     SessionInfo `json:"session"`
	Checkpoints []Record    `json:"checkpoints"`
	// Blobs holds every file content the checkpoints' events refer to, by
	// digest (base64 in JSON), so an export restores files on its own.
	Blobs map[string][]byte `json:"blobs,omitempty"`
	// Spool holds the file contents instead of Blobs in an export read
	// by ReadExport, which leaves Blobs empty: Content reads either.
	Spool *Spool `json:"-"`
}

// SortSessions orders sessions the way Sessions returns them: the most
// recently updated first, ties by id.
func SortSessions(list []SessionInfo) {
	slices.SortFunc(list, func(a, b SessionInfo) int {
		if c := b.UpdatedAt.Compare(a.UpdatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
