package boltstore

import (
	"errors"
	"os"
	"testing"

	bolt "go.etcd.io/bbolt"

	"retrace/storage"
)

// A file cut short under a running operation (another program truncated
// it after the walk) makes bbolt read its mapping past the end of the
// file: SIGBUS, which would kill the process. It is an error naming the
// file instead.
func TestAFaultOnTheMappingIsAnError(t *testing.T) {
	path, id := healthy(t, 200)
	st, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	st.fileMu.Lock()
	defer st.fileMu.Unlock()
	err = st.open(true, func(db *bolt.DB) error {
		return db.View(func(tx *bolt.Tx) error {
			if err := os.Truncate(path, 2*int64(os.Getpagesize())); err != nil {
				return err
			}
			b, _, err := st.session(tx, id)
			if err != nil {
				return err
			}
			return st.eachCheckpoint(b.Bucket(versionsBucket), id, func(int, header, []byte) error { return nil })
		})
	})
	var ce *storage.CorruptError
	if !errors.As(err, &ce) || ce.Path != path {
		t.Fatalf("want damage naming %s, got %v", path, err)
	}
}
