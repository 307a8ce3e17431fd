package boltstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	bolt "go.etcd.io/bbolt"

	"retrace/storage"
)

// Damage is never written over, and a file a crash may have hurt is
// checked whole before anyone writes to it again.
//
// An operation checks only its own part of the file (reach.go). Damage
// elsewhere is found when something reads it, by any process, or by
// `retrace verify`; from then on the file must not be written to, by that
// process or any other, until a person has looked. So whoever finds damage
// leaves a mark beside the file (damagedMarkName, in the lock directory),
// and every write looks for it first. The mark names the file it was made
// for (device, inode, size and modification time): a file put back from a
// backup, or one recover made and a person moved into place, is not the
// damaged one, and writes to it go on. `retrace verify` removes the mark
// when the whole file passes.
//
// A writer that crashed (killed, or the machine lost power) may have left
// what no later operation of its session reads. So each Store that writes
// holds a mark of its own, flock(2)ed, from its first write until Close;
// the kernel drops the flock however the process ends, and a mark whose
// flock anyone can take is a writer that did not close: the next writer
// checks the whole file, as Verify does, before it writes, and removes the
// mark once the file passed.

const (
	damagedMarkName = "damaged"
	writerMarkGlob  = "writer-*"
)

// noteDamage records damage an operation found: this Store writes no more,
// and the mark tells every other process.
func (s *Store) noteDamage(err error) {
	if ce := (*storage.CorruptError)(nil); !errors.Is(err, storage.ErrCorrupt) || errors.As(err, &ce) && ce.Derived {
		return
	}
	if s.damaged == nil {
		s.damaged = err
	}
	fi, serr := os.Stat(s.path)
	if serr != nil {
		return
	}
	// The mark is a courtesy to other processes: this one refuses to
	// write already. A lock directory that cannot be written (a read-only
	// disk) holds no writer either.
	found := damageFound{Reason: oneLine(err.Error())}
	if ce := (*storage.CorruptError)(nil); errors.As(err, &ce) {
		found = damageFound{Session: ce.Session, Version: ce.Version, Blob: ce.Blob, Reason: oneLine(ce.Reason)}
	}
	js, _ := json.Marshal(found)
	_ = writeFileAtomic(filepath.Join(s.locks, damagedMarkName), []byte(fileIdentity(fi)+"\n"+string(js)+"\n"))
}

// damageFound is the damage a mark records, to be told again.
type damageFound struct {
	Session string `json:"session,omitempty"`
	Version int    `json:"version,omitempty"`
	Blob    string `json:"blob,omitempty"`
	Reason  string `json:"reason"`
}

// checkBeforeWrite refuses to write over damage found before, by this
// Store or any process, and checks the whole file first when a writer
// crashed in it. The caller holds the exclusive file lock.
func (s *Store) checkBeforeWrite() error {
	if s.damaged != nil {
		return s.damaged
	}
	if err := s.damageMarked(); err != nil {
		return err
	}
	if s.writerMark != nil {
		return nil
	}
	crashed, err := s.crashedWriters()
	if err != nil {
		return err
	}
	if len(crashed) > 0 {
		err := s.open(true, func(db *bolt.DB) error {
			return db.View(s.laidOut(func(tx *bolt.Tx) error { return s.checkAll(tx, false) }))
		})
		if err != nil {
			s.noteDamage(err)
			return err
		}
		s.wholeWalked = true
		for _, m := range crashed {
			os.Remove(m)
		}
	}
	mark, err := os.CreateTemp(s.locks, "writer-")
	if err != nil {
		return fmt.Errorf("cannot write beside the database %s: %w", s.path, err)
	}
	if err := flock(mark, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		mark.Close()
		os.Remove(mark.Name())
		return fmt.Errorf("lock %s: %w", mark.Name(), err)
	}
	// The mark must outlive a power cut to tell of it.
	if err := syncDir(s.locks); err != nil {
		mark.Close()
		os.Remove(mark.Name())
		return fmt.Errorf("cannot write beside the database %s: %w", s.path, err)
	}
	s.writerMark = mark
	return nil
}

// crashedWriters returns the writer marks no process holds. The caller
// holds the exclusive file lock, and a Store makes its mark under that
// lock and flocks it before letting go, so a mark with no flock is one
// whose process ended without closing its Store.
func (s *Store) crashedWriters() ([]string, error) {
	marks, err := filepath.Glob(filepath.Join(s.locks, writerMarkGlob))
	if err != nil {
		return nil, err
	}
	var crashed []string
	for _, m := range marks {
		f, err := os.OpenFile(m, os.O_RDWR, 0)
		if err != nil {
			continue // removed by its Store's Close meanwhile
		}
		if flock(f, syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			crashed = append(crashed, m)
		}
		f.Close()
	}
	return crashed, nil
}

// releaseWriterMark ends this Store's writing: its mark goes. The caller
// holds fileMu.
func (s *Store) releaseWriterMark() {
	if s.writerMark == nil {
		return
	}
	os.Remove(s.writerMark.Name())
	s.writerMark.Close()
	s.writerMark = nil
}

// damageMarked is the damage a process found in this very file, if any.
func (s *Store) damageMarked() error {
	mark := filepath.Join(s.locks, damagedMarkName)
	if _, err := os.Lstat(mark); err != nil {
		return nil // the usual case, told without opening anything
	}
	b, err := os.ReadFile(mark)
	if err != nil {
		return nil // no mark (or none readable: there is nothing to go by)
	}
	who, js, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	fi, err := os.Stat(s.path)
	if err != nil || who != fileIdentity(fi) {
		return nil // made for another file at this path
	}
	var found damageFound
	if json.Unmarshal([]byte(js), &found) != nil || found.Reason == "" {
		found.Reason = "a damage mark no one can read"
	}
	return &storage.CorruptError{Path: s.path, Session: found.Session, Version: found.Version, Blob: found.Blob, Reason: fmt.Sprintf(
		"%s (found before: nothing is written to the file until `retrace verify` passes; `retrace recover NEW.db` copies what is intact)", found.Reason)}
}

// clearDamage forgets the damage mark after a whole check of the file
// passed: Verify calls it.
func (s *Store) clearDamage() {
	os.Remove(filepath.Join(s.locks, damagedMarkName))
}

// fileIdentity tells one file from another put at the same path.
func fileIdentity(fi os.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Sprintf("size %d mtime %d", fi.Size(), fi.ModTime().UnixNano())
	}
	return fmt.Sprintf("dev %d ino %d size %d mtime %d", st.Dev, st.Ino, fi.Size(), fi.ModTime().UnixNano())
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// writeFileAtomic writes a small file under a temporary name and renames
// it into place, so a reader finds the old or the new, never half.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".new-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
