package boltstore_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"retrace/storage"
	"retrace/storage/boltstore"
)

// smallDiskCreate is a process (RETRACE_TEST_ROLE=small-disk-create) that
// may write no file past 16 KiB, the size of a new bbolt file before its
// first transaction: creating a database there gets as far as bbolt's
// empty file and fails on the transaction that sets it up. It prints the
// error of Create.
func smallDiskCreate(path string) error {
	signal.Ignore(syscall.SIGXFSZ) // a write past the limit fails with EFBIG instead
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 16 << 10, Max: 16 << 10}); err != nil {
		return err
	}
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	_, err = st.Create(context.Background(), storage.NewSession{})
	fmt.Printf("create: %v\n", err)
	return nil
}

// A database whose creation fails half way leaves nothing at its path: no
// file a later run would take for an old, empty database, and no
// temporary file.
func TestFailedCreationLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "retrace.db")
	out, err := helperCmd(t, "small-disk-create", path, "").CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	msg := strings.TrimSpace(string(out))
	if !strings.HasPrefix(msg, "create: create session in "+path+": cannot create database "+path+": ") || !strings.Contains(msg, "file too large") {
		t.Fatalf("the helper said %q; want Create to fail creating the database, the file too large", msg)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "retrace.db.locks" {
			t.Errorf("a failed creation left %s behind", e.Name())
		}
	}
}
