package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// verify reads the whole file: a sound one is reported with what it holds;
// damage no command has read yet is found, named, and from then on no
// command writes to the file, until verify passes on a file put back.
func TestVerifyCommand(t *testing.T) {
	db := filepath.Join(t.TempDir(), "retrace.db")
	_, recent := gcFixture(t, db, 4)
	good, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	out := retrace(t, "verify", "--db", db).ok(t).stdout
	if want := db + " is sound: 4 sessions, 24 versions, 0 file contents and 0 memory log entries in "; !strings.HasPrefix(out, want) {
		t.Fatalf("verify says %q; want it to start %q", out, want)
	}

	// A flipped byte in one session's record, below its checksum.
	broken := recent[0]
	b, err := bolt.Open(db, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = b.Update(func(tx *bolt.Tx) error {
		vb := tx.Bucket([]byte("sessions")).Bucket([]byte(broken)).Bucket([]byte("v"))
		k := binary.BigEndian.AppendUint64(nil, 3)
		rec := bytes.Clone(vb.Get(k))
		rec[len(rec)-1] ^= 1
		return vb.Put(k, rec)
	})
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	damaged, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	// Another session's commands neither read nor refuse it...
	other := recent[1]
	retrace(t, "show", other, "--db", db).ok(t)
	// ...until verify finds it.
	r := retrace(t, "verify", "--db", db)
	if r.code != exitError || strings.Count(r.stderr, "\n") != 1 ||
		!strings.Contains(r.stderr, "session "+broken+" version 3") || !strings.Contains(r.stderr, "retrace recover NEW.db --db "+db) {
		t.Fatalf("verify of the damaged file: exit %d, %q", r.code, r.stderr)
	}
	r = retrace(t, "rollback", other, "2", "--db", db)
	if r.code != exitError || !strings.Contains(r.stderr, "session "+broken+" version 3") || !strings.Contains(r.stderr, "found before") ||
		strings.Count(r.stderr, "retrace recover") != 1 {
		t.Fatalf("a write to another session after verify found damage (what to do, said once): exit %d, %q", r.code, r.stderr)
	}
	if now, _ := os.ReadFile(db); !bytes.Equal(now, damaged) {
		t.Fatal("the damaged file was written to")
	}

	// The file put back from a backup: verify passes, and writes go on.
	if err := os.WriteFile(db, good, 0o600); err != nil {
		t.Fatal(err)
	}
	retrace(t, "verify", "--db", db).ok(t)
	retrace(t, "rollback", other, "2", "--db", db).ok(t)

	if r := retrace(t, "verify", "--db", filepath.Join(t.TempDir(), "none.db")); r.code != exitError || !strings.Contains(r.stderr, "no such file") {
		t.Fatalf("verify of a missing file: exit %d, %q", r.code, r.stderr)
	}
}
