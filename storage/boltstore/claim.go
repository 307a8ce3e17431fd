package boltstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"retrace/storage"
)

// Claim makes this store the session's writer. See lock.go for how.
func (s *Store) Claim(ctx context.Context, id string) error {
	if _, err := s.Session(ctx, id); err != nil {
		return err
	}
	return s.autoClaim(ctx, id)
}

// autoClaim claims a session before a write, without first checking it
// exists (the write's own transaction does; a claim on a missing session is
// dropped again).
func (s *Store) autoClaim(ctx context.Context, id string) error {
	if !validID.MatchString(id) {
		return &storage.NotFoundError{ID: id, Where: s.path}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	if _, ok := s.claims[id]; ok {
		return nil
	}
	if err := os.MkdirAll(s.locks, 0o700); err != nil {
		return fmt.Errorf("cannot claim session %s: %w", id, err)
	}
	f, err := claimFile(ctx, s.locks, id, s.opts.LockTimeout)
	if err != nil {
		return err
	}
	s.claims[id] = f
	return nil
}

// Release gives up the claim on a session.
func (s *Store) Release(id string) error {
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	if f, ok := s.claims[id]; ok {
		delete(s.claims, id)
		return f.Close()
	}
	return nil
}

// dropClaim releases a claim and removes its lock file: the session is
// gone. The removal happens under the claim gate, so that no claimer opens
// the old file, finds it locked and then cannot read its pid, or locks the
// removed file while another locks a new one. If the gate cannot be had,
// the lock file stays: a stale one is harmless, as its flock is gone.
func (s *Store) dropClaim(id string) {
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	f, ok := s.claims[id]
	if !ok {
		return
	}
	delete(s.claims, id)
	gate, err := lockFile(context.Background(), filepath.Join(s.locks, claimGateName), true, s.opts.LockTimeout)
	if err == nil {
		os.Remove(claimPath(s.locks, id))
	}
	f.Close()
	if gate != nil {
		gate.Close()
	}
}

// Holder reports whether another store (in this or another process) holds
// the session's claim, and its pid when it wrote one. It takes no claim:
// the lock is tried and let go at once.
func (s *Store) Holder(id string) (pid int, held bool) {
	if !validID.MatchString(id) {
		return 0, false
	}
	s.claimMu.Lock()
	_, ours := s.claims[id]
	s.claimMu.Unlock()
	if ours {
		return os.Getpid(), false
	}
	f, err := claimFile(context.Background(), s.locks, id, s.opts.LockTimeout)
	if err != nil {
		var be *storage.BusyError
		if errors.As(err, &be) {
			return be.PID, true
		}
		return 0, false
	}
	f.Close()
	return 0, false
}
