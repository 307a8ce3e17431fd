package boltstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
)

// Options tune a Store. The zero value is what retrace uses.
type Options struct {
	// LockTimeout bounds how long an operation waits while another
	// process has a transaction open on the file. Default 1.5 s.
	LockTimeout time.Duration
	// Now is the clock for times the store sets itself (session creation
	// and head moves). Default time.Now.
	Now func() time.Time
}

// Store is a storage.Store on one bbolt file.
type Store struct {
	path  string
	locks string
	opts  Options

	// fileMu makes this process run one transaction at a time: bbolt's
	// file lock belongs to an open file, so two opens in one process would
	// block each other just as two processes do.
	fileMu   sync.Mutex
	schemaOK bool  // the file's schema was checked (and migrated); guarded by fileMu
	damaged  error // damage found, after which nothing is written; guarded by fileMu
	walked   bool  // checkPages passed in the operation under way; guarded by fileMu
	closed   bool  // guarded by fileMu

	// What this Store has walked and checked of the file at walkedFile
	// (see reach.go and checkBeforeWrite); guarded by fileMu.
	walkedFile     os.FileInfo
	wholeWalked    bool            // every page
	walkedVersions map[string]bool // a session's versions, by id
	checkedRecords map[string]bool // a session's records, before its first write
	memoryChecked  bool            // the memory log, before the first append
	reach          *reach          // the operation under way's walk
	writerMark     *os.File        // held while this Store may write; see crash.go

	claimMu sync.Mutex
	claims  map[string]*os.File
}

var _ storage.Store = (*Store)(nil)

// Open returns a store on the database file at path. A missing file is
// created, with its directories (0700; the file 0600), on the first write;
// an existing one is checked now, so a damaged or foreign file is refused
// before anything is done with it.
func Open(path string, opts Options) (*Store, error) {
	if path == "" {
		return nil, errors.New("open database: no path given")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if opts.LockTimeout <= 0 {
		// Transactions take milliseconds; a process that holds the file
		// for 1.5 s is stuck, and a busy error beats a hang.
		opts.LockTimeout = 1500 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Store{path: abs, locks: lockDir(abs), opts: opts, claims: map[string]*os.File{},
		walkedVersions: map[string]bool{}, checkedRecords: map[string]bool{}}

	fi, err := os.Stat(abs)
	switch {
	case err == nil && fi.IsDir():
		return nil, fmt.Errorf("database path %s is a directory; give a file path such as %s", abs, filepath.Join(abs, "retrace.db"))
	case err == nil && !fi.Mode().IsRegular():
		return nil, fmt.Errorf("database path %s is not a regular file", abs)
	case err == nil:
		if err := s.viewIn(context.Background(), fileHead, func(*bolt.Tx) error { return nil }); err != nil {
			return nil, err
		}
	case !isNotExist(err):
		return nil, fmt.Errorf("open database %s: %w", abs, err)
	default:
		if err := checkCreatable(abs); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// checkCreatable fails early when the file's directory can never be made:
// some ancestor exists but is not a directory.
func checkCreatable(path string) error {
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("cannot create database %s: %s is not a directory", path, dir)
			}
			return nil
		}
		if !isNotExist(err) || dir == filepath.Dir(dir) {
			return fmt.Errorf("cannot create database %s: %w", path, err)
		}
	}
}

// Create starts a new session and claims it.
func (s *Store) Create(ctx context.Context, ns storage.NewSession) (storage.SessionInfo, error) {
	created := ns.CreatedAt
	if created.IsZero() {
		created = s.opts.Now()
	}
	rec := infoRecord{Title: ns.Title, Model: ns.Model, Workspace: ns.Workspace,
		CreatedAt: created.UTC(), UpdatedAt: created.UTC(), Phase: state.Idle}
	var id string
	var err error
	for {
		// The id comes first: the walk before the transaction checks the
		// way to where its bucket goes.
		id = newID()
		err = s.updateIn(ctx, sessionScope(id, false), func(tx *bolt.Tx) error {
			sessions, err := s.sessionsOf(tx)
			if err != nil {
				return err
			}
			if sessions.Bucket([]byte(id)) != nil {
				return errIDTaken
			}
			b, err := sessions.CreateBucket([]byte(id))
			if err != nil {
				return err
			}
			if _, err := b.CreateBucket(versionsBucket); err != nil {
				return err
			}
			return putInfo(b, rec)
		})
		if !errors.Is(err, errIDTaken) {
			break
		}
	}
	if err != nil {
		return storage.SessionInfo{}, fmt.Errorf("create session in %s: %w", s.path, err)
	}
	if err := s.Claim(ctx, id); err != nil {
		return storage.SessionInfo{}, err
	}
	return rec.info(id), nil
}

// errIDTaken: a new id drew one the file holds (one in 2^64 per session).
var errIDTaken = errors.New("the id is taken")

// newID returns 16 hex digits from crypto/rand: short enough to type a
// prefix of, with no realistic chance of two sessions colliding.
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Append keeps ev as a checkpoint under parent, which must be the head,
// and the file contents it carries that the file does not hold yet, in one
// transaction.
func (s *Store) Append(ctx context.Context, id string, parent int, ev state.Event) (storage.Checkpoint, error) {
	return s.appendUnder(ctx, id, parent, ev, false)
}

// Fork keeps ev as a checkpoint under parent, any version of the session,
// and moves the head to it: a rollback and the first checkpoint of the
// branch it starts, in one transaction.
func (s *Store) Fork(ctx context.Context, id string, parent int, ev state.Event) (storage.Checkpoint, error) {
	return s.appendUnder(ctx, id, parent, ev, true)
}

func (s *Store) appendUnder(ctx context.Context, id string, parent int, ev state.Event, fork bool) (storage.Checkpoint, error) {
	blobs, records, err := prepareBlobs(ev)
	if err != nil {
		return storage.Checkpoint{}, fmt.Errorf("session %s: %w", id, err)
	}
	if err := s.autoClaim(ctx, id); err != nil {
		return storage.Checkpoint{}, err
	}
	var cp storage.Checkpoint
	err = s.updateIn(ctx, sessionScope(id, true), func(tx *bolt.Tx) error {
		b, rec, err := s.session(tx, id)
		if err != nil {
			return err
		}
		if err := s.checkRecordsOnce(tx, id); err != nil {
			return err
		}
		switch {
		case fork && rec.missing(id, parent) != nil:
			return rec.missing(id, parent)
		case !fork && parent != rec.Head:
			return &storage.ConflictError{Session: id, Parent: parent, Head: rec.Head}
		}
		vb := b.Bucket(versionsBucket)
		from, err := s.phaseAt(vb, id, parent)
		if err != nil {
			return err
		}
		to, err := state.Next(from, ev.Kind)
		if err != nil {
			return err
		}
		value, err := encodeCheckpoint(parent, to, ev)
		if err != nil {
			return fmt.Errorf("session %s: %w", id, err)
		}
		if err := s.keepBlobs(tx, ev, blobs, records); err != nil {
			return fmt.Errorf("session %s: %w", id, err)
		}
		v := rec.Versions + 1
		// Keys only ever grow, so full pages are never split again: fill
		// them, rather than leaving bbolt's default half of each empty.
		vb.FillPercent = 1.0
		if err := vb.Put(versionKey(v), value); err != nil {
			return err
		}
		if err := s.keepSnapshot(b, id, v); err != nil {
			return err
		}
		rec.Head, rec.Versions, rec.Phase, rec.UpdatedAt = v, v, to, ev.At.UTC()
		cp = storage.Checkpoint{Version: v, Parent: parent, Event: ev.Kind, Phase: to, At: ev.At.UTC()}
		return putInfo(b, rec)
	})
	if errors.Is(err, storage.ErrSessionNotFound) {
		_ = s.Release(id)
	}
	return cp, err
}

// Head returns the state at the session's head.
func (s *Store) Head(ctx context.Context, id string) (state.State, error) {
	var st state.State
	err := s.viewSession(ctx, id, true, func(tx *bolt.Tx) error {
		b, rec, err := s.session(tx, id)
		if err != nil {
			return err
		}
		st, err = s.replay(b.Bucket(versionsBucket), id, rec.Head)
		return err
	})
	return st, err
}

// At returns the state at a version.
func (s *Store) At(ctx context.Context, id string, version int) (state.State, error) {
	var st state.State
	err := s.viewSession(ctx, id, true, func(tx *bolt.Tx) error {
		b, rec, err := s.session(tx, id)
		if err != nil {
			return err
		}
		if err := rec.missing(id, version); err != nil {
			return err
		}
		st, err = s.replay(b.Bucket(versionsBucket), id, version)
		return err
	})
	return st, err
}

// Tree lists every version's header and the branches.
func (s *Store) Tree(ctx context.Context, id string) (storage.Tree, error) {
	var t storage.Tree
	err := s.viewSession(ctx, id, true, func(tx *bolt.Tx) error {
		b, rec, err := s.session(tx, id)
		if err != nil {
			return err
		}
		cps := make([]storage.Checkpoint, 0, rec.Versions)
		err = s.eachCheckpoint(b.Bucket(versionsBucket), id, func(v int, h header, _ []byte) error {
			cps = append(cps, storage.Checkpoint{Version: v, Parent: h.parent, Event: h.kind, Phase: h.phase, At: h.at})
			return nil
		})
		t = storage.BuildTree(id, rec.Head, cps)
		return err
	})
	return t, err
}

// SetHead moves the head to version.
func (s *Store) SetHead(ctx context.Context, id string, version int) error {
	if err := s.autoClaim(ctx, id); err != nil {
		return err
	}
	err := s.updateIn(ctx, sessionScope(id, true), func(tx *bolt.Tx) error {
		b, rec, err := s.session(tx, id)
		if err != nil {
			return err
		}
		if err := s.checkRecordsOnce(tx, id); err != nil {
			return err
		}
		if err := rec.missing(id, version); err != nil {
			return err
		}
		phase, err := s.phaseAt(b.Bucket(versionsBucket), id, version)
		if err != nil {
			return err
		}
		rec.Head, rec.Phase, rec.UpdatedAt = version, phase, s.opts.Now().UTC()
		return putInfo(b, rec)
	})
	if errors.Is(err, storage.ErrSessionNotFound) {
		_ = s.Release(id)
	}
	return err
}

// Rename sets a session's title. It needs no claim: a title is not part
// of any version.
func (s *Store) Rename(ctx context.Context, id, title string) error {
	return s.updateIn(ctx, sessionScope(id, false), func(tx *bolt.Tx) error {
		b, rec, err := s.session(tx, id)
		if err != nil {
			return err
		}
		rec.Title = title
		return putInfo(b, rec)
	})
}

// Session returns one session's summary.
func (s *Store) Session(ctx context.Context, id string) (storage.SessionInfo, error) {
	var info storage.SessionInfo
	err := s.viewSession(ctx, id, false, func(tx *bolt.Tx) error {
		_, rec, err := s.session(tx, id)
		info = rec.info(id)
		return err
	})
	return info, err
}

// Sessions lists every session, most recently updated first.
func (s *Store) Sessions(ctx context.Context) ([]storage.SessionInfo, error) {
	var list []storage.SessionInfo
	err := s.viewIn(ctx, listScope(nil), func(tx *bolt.Tx) error {
		var err error
		list, err = s.allSessions(tx, nil)
		return err
	})
	if errors.Is(err, errNoFile) {
		return nil, nil
	}
	storage.SortSessions(list)
	return list, err
}

// Resolve finds the one session whose id starts with prefix.
func (s *Store) Resolve(ctx context.Context, prefix string) (string, error) {
	if prefix == "" {
		return "", errors.New("no session id given")
	}
	var matches []storage.SessionInfo
	err := s.viewIn(ctx, listScope([]byte(prefix)), func(tx *bolt.Tx) error {
		var err error
		matches, err = s.allSessions(tx, []byte(prefix))
		return err
	})
	if err != nil && !errors.Is(err, errNoFile) {
		return "", err
	}
	for _, m := range matches {
		if m.ID == prefix {
			return m.ID, nil
		}
	}
	switch len(matches) {
	case 0:
		return "", &storage.NotFoundError{ID: prefix, Where: s.path}
	case 1:
		return matches[0].ID, nil
	}
	storage.SortSessions(matches)
	return "", &storage.AmbiguousError{Prefix: prefix, Candidates: matches}
}

// Delete removes a session.
func (s *Store) Delete(ctx context.Context, id string) error {
	if err := s.autoClaim(ctx, id); err != nil {
		return err
	}
	// Deleting frees every page of the session, and may merge the pages
	// of the sessions bucket it leaves.
	err := s.updateIn(ctx, scope{session: id, versions: true, siblings: true}, func(tx *bolt.Tx) error {
		sessions, err := s.sessionsOf(tx)
		if err != nil {
			return err
		}
		if _, _, err := s.session(tx, id); err != nil {
			return err
		}
		return sessions.DeleteBucket([]byte(id))
	})
	if err == nil || errors.Is(err, storage.ErrSessionNotFound) {
		s.dropClaim(id)
	}
	return err
}

// Export returns a session, every checkpoint with its event, and every
// file content the events refer to.
func (s *Store) Export(ctx context.Context, id string) (storage.Export, error) {
	return s.export(ctx, id, true)
}

// ExportRecords is Export without the file contents, which it checks the
// file holds (see storage.Exporter).
func (s *Store) ExportRecords(ctx context.Context, id string) (storage.Export, error) {
	return s.export(ctx, id, false)
}

// export reads a session's records and, with withContents, the file
// contents they refer to; without, it looks only for each content's
// record.
func (s *Store) export(ctx context.Context, id string, withContents bool) (storage.Export, error) {
	var ex storage.Export
	err := s.viewSession(ctx, id, true, func(tx *bolt.Tx) error {
		b, rec, err := s.session(tx, id)
		if err != nil {
			return err
		}
		c, err := s.contentsOf(tx)
		if err != nil {
			return err
		}
		ex.Session = rec.info(id)
		ex.Checkpoints = make([]storage.Record, 0, rec.Versions)
		seen := map[string]bool{}
		return s.eachCheckpoint(b.Bucket(versionsBucket), id, func(v int, h header, raw []byte) error {
			_, ev, err := decodeCheckpoint(raw)
			if err != nil {
				return &storage.CorruptError{Path: s.path, Session: id, Version: v, Reason: err.Error()}
			}
			ex.Checkpoints = append(ex.Checkpoints, storage.Record{
				Checkpoint: storage.Checkpoint{Version: v, Parent: h.parent, Event: h.kind, Phase: h.phase, At: h.at},
				Data:       ev,
			})
			for _, d := range ev.BlobDigests() {
				if seen[d] {
					continue
				}
				seen[d] = true
				var data []byte
				if withContents {
					data, err = s.blobIn(c, d)
				} else {
					err = s.holds(c, d)
				}
				if errors.Is(err, storage.ErrBlobNotFound) {
					return &storage.CorruptError{Path: s.path, Session: id, Version: v, Blob: d, Reason: "the file content it refers to is missing"}
				} else if err != nil {
					return err
				}
				if withContents {
					if ex.Blobs == nil {
						ex.Blobs = map[string][]byte{}
					}
					ex.Blobs[d] = data
				}
			}
			return nil
		})
	})
	return ex, err
}

// Close releases every claim. The file itself is never held open between
// operations.
func (s *Store) Close() error {
	s.fileMu.Lock()
	s.closed = true
	s.releaseWriterMark()
	s.fileMu.Unlock()
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	for id, f := range s.claims {
		f.Close()
		delete(s.claims, id)
	}
	return nil
}

func (r infoRecord) info(id string) storage.SessionInfo {
	return storage.SessionInfo{
		ID: id, Title: r.Title, Model: r.Model, Workspace: r.Workspace,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		Head: r.Head, Versions: r.Versions, Phase: r.Phase,
	}
}

// validID is the shape of the ids retrace makes, and of everything it will
// use as a lock file name.
var validID = regexp.MustCompile(`^[0-9A-Za-z_-]{1,64}$`)
