package pgstore_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"retrace/state"
	"retrace/storage"
	"retrace/storage/pgstore"
)

func hello(at time.Time) state.Event {
	return state.Event{Kind: state.UserMessage, At: at, Messages: []state.Message{{Role: state.RoleUser, Content: "hello"}}}
}

// A second store's claim is refused naming the holder: its pid and its
// host, in the error and in its message.
func TestClaimRefusedNamesHolder(t *testing.T) {
	_, first, second, info := twoHosts(t, "held")
	err := second.Claim(ctx, info.ID)
	var be *storage.BusyError
	if !errors.As(err, &be) || be.Session != info.ID || be.PID != os.Getpid() || be.Host != "first-host" {
		t.Fatalf("second claim: %v; want a BusyError naming session %s, pid %d on first-host", err, info.ID, os.Getpid())
	}
	if want := fmt.Sprintf("pid %d on first-host", os.Getpid()); !strings.Contains(err.Error(), want) {
		t.Fatalf("second claim: %q does not name the holder's host", err)
	}
	// Close releases: the second store claims at once.
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if err := second.Claim(ctx, info.ID); err != nil {
		t.Fatalf("claim after the holder closed: %v", err)
	}
}

// A claim whose connection is gone (here its backend is terminated, as a
// network cut or a server restart would end it) must not go on writing:
// the next write fails saying so, writes nothing, and another store can
// claim the session.
func TestLostClaimStopsWrites(t *testing.T) {
	loc, first, second, info := twoHosts(t, "lost")
	at := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	s, err := storage.Commit(ctx, first, state.New(info.ID), hello(at))
	if err != nil {
		t.Fatal(err)
	}
	endClaim(t, loc, info.ID)

	plan := state.Event{Kind: state.PlanSet, At: at.Add(time.Second), Plan: []state.Step{{Text: "one step"}}}
	_, err = first.Append(ctx, info.ID, s.Version, plan)
	if !errors.Is(err, storage.ErrClaimLost) || !strings.Contains(err.Error(), info.ID) {
		t.Fatalf("append after the claim's connection ended: %v; want ErrClaimLost naming the session", err)
	}
	if got, err := second.Session(ctx, info.ID); err != nil || got.Versions != 1 {
		t.Fatalf("after a write on a lost claim: %+v, %v; want 1 version", got, err)
	}
	if err := second.Claim(ctx, info.ID); err != nil {
		t.Fatalf("claim after the holder's connection ended: %v", err)
	}
	// The first store is now refused as any other writer is.
	if _, err := first.Append(ctx, info.ID, s.Version, plan); !errors.Is(err, storage.ErrBusy) {
		t.Fatalf("the first store writing after another claimed: %v", err)
	}
	if _, err := second.Append(ctx, info.ID, s.Version, plan); err != nil {
		t.Fatalf("the new holder's append: %v", err)
	}
}

// An explicit Claim does not take a claim whose connection was lost for a
// live one: it claims afresh, and the writes after it go in.
func TestClaimAgainAfterLostConnection(t *testing.T) {
	loc := newDatabase(t)
	st := openPG(t, loc, pgstore.Options{})
	info, err := st.Create(ctx, storage.NewSession{Title: "again"})
	if err != nil {
		t.Fatal(err)
	}
	endClaim(t, loc, info.ID)
	if err := st.Claim(ctx, info.ID); err != nil {
		t.Fatalf("claim again after the claim's connection ended: %v", err)
	}
	if _, err := st.Append(ctx, info.ID, 0, hello(ctxTime)); err != nil {
		t.Fatalf("append after claiming again: %v", err)
	}
}

// endClaim terminates the backend of the claim on session id, as a
// network cut or a server restart would end it, and waits (with a
// deadline) until the backend holds no lock any more: it exits in its own
// time.
func endClaim(t *testing.T, loc, id string) {
	t.Helper()
	conn := connect(t, loc)
	var backend int32
	if err := conn.QueryRow(ctx, "SELECT backend_pid FROM retrace_claims WHERE session_id = $1", id).Scan(&backend); err != nil {
		t.Fatalf("the claim's row: %v", err)
	}
	if _, err := conn.Exec(ctx, "SELECT pg_terminate_backend($1)", backend); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		var held bool
		if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE pid = $1 AND locktype = 'advisory')", backend).Scan(&held); err != nil {
			t.Fatal(err)
		}
		if !held {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("backend %d still holds its lock 30 s after it was terminated", backend)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Holder names another store's live claim, and nobody once it is gone or
// when the claim is this store's own.
func TestHolder(t *testing.T) {
	_, first, second, info := twoHosts(t, "held")
	if pid, held := second.Holder(info.ID); !held || pid != os.Getpid() {
		t.Errorf("while the first store holds it: pid %d, held %v", pid, held)
	}
	if _, held := first.Holder(info.ID); held {
		t.Error("a store's own claim is held by another")
	}
	if err := first.Release(info.ID); err != nil {
		t.Fatal(err)
	}
	if pid, held := second.Holder(info.ID); held {
		t.Errorf("after the release: held by pid %d", pid)
	}
}

// twoHosts is two stores on a fresh database, as on machines named
// first-host and second-host, the first holding a new session titled
// title.
func twoHosts(t *testing.T, title string) (string, *pgstore.Store, *pgstore.Store, storage.SessionInfo) {
	t.Helper()
	loc := newDatabase(t)
	first := openPG(t, loc, pgstore.Options{Host: "first-host"})
	second := openPG(t, loc, pgstore.Options{Host: "second-host"})
	info, err := first.Create(ctx, storage.NewSession{Title: title})
	if err != nil {
		t.Fatal(err)
	}
	return loc, first, second, info
}
