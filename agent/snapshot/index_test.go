package snapshot

import (
	"crypto/sha256"
	"maps"
	"slices"
	"testing"
)

func sampleEntries() map[string]entry {
	return map[string]entry{
		"a.txt":       {stamp: stamp{size: 3, mtime: 1700000000123456789, ctime: 1700000000123456790, ino: 42, mode: 0o644}, sum: sha256.Sum256([]byte("abc")), hashed: true},
		"dir/b.go":    {stamp: stamp{size: 0, mtime: -5, ctime: 0, ino: 1 << 62, mode: 0o755}, sum: sha256.Sum256(nil), hashed: true},
		"recent.txt":  {stamp: stamp{size: 1, mode: 0o644}, hashed: true, recheck: true},
		"link":        {stamp: stamp{mode: 0o777 | 1<<27}, untracked: reasonSymlink},
		"ignored.log": {stamp: stamp{size: 9, mode: 0o644}, ignored: reasonGitignore},
	}
}

// TestIndexRoundTrip: the index keeps exactly the vouched entries.
func TestIndexRoundTrip(t *testing.T) {
	in := sampleEntries()
	dirs, n, err := decodeIndex("/w", encodeIndex("/w", listingsOf(in)))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]entry{"a.txt": in["a.txt"], "dir/b.go": in["dir/b.go"]}
	if got := flatten(dirs); !maps.Equal(got, want) || n != 2 {
		t.Errorf("decoded %d entries %+v\nwant %+v", n, got, want)
	}
	if dirs, n, err := decodeIndex("/w", encodeIndex("/w", nil)); err != nil || len(dirs) != 0 || n != 0 {
		t.Errorf("empty index: %v, %d, %v", dirs, n, err)
	}
}

// FuzzIndex feeds the decoder damaged indexes, both as they are (the
// checksum catches them) and with the checksum made right, so that the
// parser behind it meets them too. It must never panic, and whatever it
// accepts must survive another round trip unchanged.
func FuzzIndex(f *testing.F) {
	f.Add(encodeIndex("/w", listingsOf(sampleEntries())))
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
			dirs, n, err := decodeIndex("/w", in)
			if err != nil {
				continue
			}
			got := flatten(dirs)
			if len(got) != n {
				t.Fatalf("said %d entries, holds %d", n, len(got))
			}
			for p, e := range got {
				if !e.vouched() || e.size < 0 || p == "" {
					t.Fatalf("accepted an entry it should not: %q %+v", p, e)
				}
			}
			again, _, err := decodeIndex("/w", encodeIndex("/w", dirs))
			if err != nil || !maps.Equal(flatten(again), got) {
				t.Fatalf("round trip of an accepted index: %v", err)
			}
		}
	})
}

// flatten lists the entries of a scan's listings by workspace path.
func flatten(dirs map[string]*listing) map[string]entry {
	out := map[string]entry{}
	for dir, l := range dirs {
		for i, name := range l.names {
			out[join(dir, name)] = l.entries[i]
		}
	}
	return out
}

// TestListingsAreSorted: the index's listings come out sorted by name, as
// a scan's cursor needs them, whatever order the paths were stored in.
func TestListingsAreSorted(t *testing.T) {
	dirs := listingsOf(map[string]entry{"b": {}, "a": {}, "d/z": {}, "d/a.b": {}, "d/a": {}})
	if got := dirs["."].names; !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("root: %v", got)
	}
	if got := dirs["d"].names; !slices.Equal(got, []string{"a", "a.b", "z"}) {
		t.Errorf("d: %v", got)
	}
}
