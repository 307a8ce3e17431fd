package pgstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"retrace/storage"
)

// Options tune a Store. The zero value is what retrace uses.
type Options struct {
	// Now is the clock for times the store sets itself (session creation
	// and head moves). Default time.Now.
	Now func() time.Time
	// Host names this machine in the claims other processes are refused
	// by. Default os.Hostname.
	Host string
	// MaxConns bounds the pool of connections for ordinary operations;
	// each claim holds one connection more. Default 4.
	MaxConns int32
	// ConnectTimeout bounds connecting when the URL sets no
	// connect_timeout. Default 10 s.
	ConnectTimeout time.Duration
}

// Store is a storage.Store on a PostgreSQL database.
type Store struct {
	where  string // the database, as errors name it: never the password
	secret string // the password, scrubbed from every error that could show it
	opts   Options
	pool   *pgxpool.Pool
	config *pgx.ConnConfig // for claim connections

	claimMu sync.Mutex
	claims  map[string]*claim
	closed  bool // guarded by claimMu

	// memoryChecked is set once an append read the whole memory log,
	// checked, as every later one starts from its snapshot.
	memoryChecked atomic.Bool
}

var _ storage.Store = (*Store)(nil)

// Open connects to the database at url (a postgres:// URL or key=value
// settings, as libpq takes them; the password may come from the URL,
// PGPASSWORD or ~/.pgpass), and brings its schema up to date. A database
// written by a newer retrace is refused (storage.ErrTooNew).
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	secret := passwordIn(url)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, scrub(fmt.Errorf("open database: the URL does not parse: %w", err), secret)
	}
	cc := cfg.ConnConfig
	if cc.Password != "" {
		secret = cc.Password
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Host == "" {
		opts.Host, _ = os.Hostname()
	}
	if opts.MaxConns <= 0 {
		opts.MaxConns = 4
	}
	cfg.MaxConns = opts.MaxConns
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = 10 * time.Second
	}
	if cc.ConnectTimeout == 0 {
		// A server that never answers must not hold a command forever
		// (libpq waits without end); connect_timeout in the URL wins.
		cc.ConnectTimeout = opts.ConnectTimeout
	}
	s := &Store{where: describe(cc), secret: secret, opts: opts, config: cc.Copy(), claims: map[string]*claim{}}
	s.pool, err = pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, s.errorf("open database %s: %w", s.where, err)
	}
	if err := s.migrate(ctx); err != nil {
		s.pool.Close()
		return nil, err
	}
	return s, nil
}

// String names the database the store is on, without its password.
func (s *Store) String() string { return s.where }

// Close releases every claim and closes the connections.
func (s *Store) Close() error {
	s.claimMu.Lock()
	if s.closed {
		s.claimMu.Unlock()
		return nil
	}
	s.closed = true
	var errs []error
	for id, c := range s.claims {
		delete(s.claims, id)
		errs = append(errs, s.unclaim(id, c))
	}
	s.claimMu.Unlock()
	s.pool.Close()
	return errors.Join(errs...)
}

// Redact returns a database's URL (or key=value settings) as errors and
// messages may show it: without its password. What does not parse is
// shown as "a PostgreSQL database", for it may hold the password anywhere.
func Redact(conn string) string {
	cfg, err := pgx.ParseConfig(conn)
	if err != nil {
		return "a PostgreSQL database"
	}
	return describe(cfg)
}

// describe names a database as a URL without the password.
func describe(cc *pgx.ConnConfig) string {
	u := url.URL{Scheme: "postgres", User: url.User(cc.User), Path: "/" + cc.Database}
	if strings.HasPrefix(cc.Host, "/") {
		u.RawQuery = "host=" + cc.Host
	} else {
		u.Host = cc.Host + ":" + strconv.Itoa(int(cc.Port))
	}
	return u.String()
}

// passwordIn finds the password a URL or key=value string spells, before
// pgx has read it: so that an error about a URL that does not even parse
// cannot show it.
func passwordIn(conn string) string {
	if u, err := url.Parse(conn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		if pw, ok := u.User.Password(); ok {
			return pw
		}
		return u.Query().Get("password")
	}
	if m := dsnPassword.FindStringSubmatch(conn); m != nil {
		return strings.Trim(m[1], "'")
	}
	return ""
}

var dsnPassword = regexp.MustCompile(`(?:^|\s)password\s*=\s*('[^']*'|\S+)`)

// scrubbed is an error whose text has the password taken out; errors.Is
// and As still see what it wraps. pgx (5.12) already redacts passwords
// from the errors it makes; this keeps that true whatever a later pgx, or
// an error it wraps, says.
type scrubbed struct {
	err    error
	secret string
}

func (e *scrubbed) Error() string {
	msg := e.err.Error()
	msg = strings.ReplaceAll(msg, e.secret, "xxxxx")
	if esc := url.QueryEscape(e.secret); esc != e.secret {
		msg = strings.ReplaceAll(msg, esc, "xxxxx")
	}
	if esc := url.PathEscape(e.secret); esc != e.secret {
		msg = strings.ReplaceAll(msg, esc, "xxxxx")
	}
	return msg
}

func (e *scrubbed) Unwrap() error { return e.err }

func scrub(err error, secret string) error {
	if err == nil || secret == "" {
		return err
	}
	return &scrubbed{err: err, secret: secret}
}

// errorf is fmt.Errorf, scrubbed: for errors that carry what pgx said
// about connecting, which names the settings it used.
func (s *Store) errorf(format string, args ...any) error {
	return scrub(fmt.Errorf(format, args...), s.secret)
}

// wrap names the database and the session an error from an operation
// concerns. The store's own typed errors name them already.
func (s *Store) wrap(err error, what, id string) error {
	if err == nil {
		return nil
	}
	var (
		nf *storage.NotFoundError
		ce *storage.ConflictError
		ve *storage.VersionError
		co *storage.CorruptError
	)
	if errors.As(err, &nf) || errors.As(err, &ce) || errors.As(err, &ve) || errors.As(err, &co) || errors.Is(err, storage.ErrBusy) || errors.Is(err, storage.ErrClaimLost) {
		return err
	}
	if id == "" {
		return s.errorf("%s in %s: %w", what, s.where, err)
	}
	return s.errorf("%s session %s in %s: %w", what, id, s.where, err)
}

func (s *Store) notFound(id string) error {
	return &storage.NotFoundError{ID: id, Where: s.where}
}

func (s *Store) corrupt(id string, v int, reason string) error {
	return &storage.CorruptError{Path: s.where, Session: id, Version: v, Reason: reason}
}

// newID returns 16 hex digits from crypto/rand, as boltstore's ids are.
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// validID is the shape of the ids retrace makes; anything else is no
// session of ours, and is never sent to the database.
var validID = regexp.MustCompile(`^[0-9A-Za-z_-]{1,64}$`)
