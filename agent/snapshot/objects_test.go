package snapshot

import (
	"crypto/sha256"
	"testing"
)

func TestObjectsRoundTrip(t *testing.T) {
	o := newObjects(t.TempDir())
	for _, data := range [][]byte{nil, []byte("x"), make([]byte, 1<<20)} {
		sum := sha256.Sum256(data)
		if err := o.put(sum, data); err != nil {
			t.Fatal(err)
		}
		if err := o.put(sum, data); err != nil {
			t.Fatalf("a second put of the same content: %v", err)
		}
		got, ok := o.get(sum, int64(len(data)))
		if !ok || string(got) != string(data) {
			t.Errorf("%d bytes: get = %d bytes, %v", len(data), len(got), ok)
		}
		if _, ok := o.get(sum, int64(len(data))+1); ok {
			t.Errorf("%d bytes: get with the wrong size succeeded", len(data))
		}
	}
}
