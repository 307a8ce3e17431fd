package snapshot

import (
	"crypto/sha256"
	"maps"
	"testing"
)

func sampleEntries() map[string]entry {
	return map[string]entry{
		"a.txt":       {stamp: stamp{size: 3, mtime: 1700000000123456789, ctime: 1700000000123456790, ino: 42, mode: 0o644}, sum: sha256.Sum256([]byte("abc")), hashed: true},
		"dir/b.go":    {stamp: stamp{size: 0, mtime: -5, ctime: 0, ino: 1 << 62, mode: 0o755}, sum: sha256.Sum256(nil), hashed: true},
		"recent.txt":  {stamp: stamp{size: 1, mode: 0o644}, hashed: true, recheck: true},
		"link":        {stamp: stamp{mode: 0o777 | 1<<27}, untracked: reasonSymlink},
		"ignored.log": {stamp: stamp{size: 9, mode: 0o644}, untracked: reasonGitignore, ignored: true},
	}
}

// TestIndexRoundTrip: the index keeps exactly the vouched entries.
func TestIndexRoundTrip(t *testing.T) {
	in := sampleEntries()
	got, err := decodeIndex("/w", encodeIndex("/w", in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]entry{"a.txt": in["a.txt"], "dir/b.go": in["dir/b.go"]}
	if !maps.Equal(got, want) {
		t.Errorf("decoded %+v\nwant %+v", got, want)
	}
	if got, err := decodeIndex("/w", encodeIndex("/w", nil)); err != nil || len(got) != 0 {
		t.Errorf("empty index: %v, %v", got, err)
	}
}

// FuzzIndex feeds the decoder damaged indexes, both as they are (the
// checksum catches them) and with the checksum made right, so that the
// parser behind it meets them too. It must never panic, and whatever it
// accepts must survive another round trip unchanged.
func FuzzIndex(f *testing.F) {
	f.Add(encodeIndex("/w", sampleEntries()))
	f.Add(encodeIndex("/w", nil))
	f.Add([]byte(indexMagic + "\x01\x02/w\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		body := data
		if len(data) >= sha256.Size {
			body = data[:len(data)-sha256.Size]
		}
		sum := sha256.Sum256(body)
		for _, in := range [][]byte{data, append(body[:len(body):len(body)], sum[:]...)} {
			got, err := decodeIndex("/w", in)
			if err != nil {
				continue
			}
			for p, e := range got {
				if !e.vouched() || e.size < 0 || p == "" {
					t.Fatalf("accepted an entry it should not: %q %+v", p, e)
				}
			}
			again, err := decodeIndex("/w", encodeIndex("/w", got))
			if err != nil || !maps.Equal(again, got) {
				t.Fatalf("round trip of an accepted index: %v", err)
			}
		}
	})
}
