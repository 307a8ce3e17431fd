package snapshot

import (
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"
)

// noGrace lets eviction take packs as soon as they are written, for the
// length of a test.
func noGrace(t *testing.T) {
	old := evictGrace
	evictGrace = 0
	t.Cleanup(func() { evictGrace = old })
}

// Eviction drops the contents no workspace holds any more and keeps those
// a workspace's files hold now: a later command that overwrites one still
// has its before image.
func TestEvictKeepsWhatWorkspacesHold(t *testing.T) {
	noGrace(t)
	f := newFixture(t, Options{})
	f.trustStamps()
	f.write("kept.txt", "still here")
	f.write("a.txt", "the first")
	m := f.mark()
	f.write("a.txt", "the second")
	f.changes(m)
	rep, err := Evict(f.opts.CacheDir, 1)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Objects != 1 || rep.After >= rep.Before {
		t.Errorf("eviction report %+v: want 1 object removed and the cache smaller", rep)
	}
	o := newObjects(f.opts.CacheDir)
	t.Cleanup(func() { _ = o.close() })
	for content, want := range map[string]bool{"the first": false, "the second": true, "still here": true} {
		if _, ok := o.get(sha256.Sum256([]byte(content)), int64(len(content))); ok != want {
			t.Errorf("after eviction, %q in the cache: %v, want %v", content, ok, want)
		}
	}
	// A new process overwrites what the cache kept: its before image is
	// there.
	f.open()
	f.trustStamps()
	m = f.mark()
	f.write("kept.txt", "overwritten")
	changes, blobs := f.changes(m)
	wantSummary(t, summary(changes, blobs), []string{"kept.txt: still here -> overwritten"})
}

// A cache under its budget, and a pack younger than the grace, are left
// as they are.
func TestEvictLeavesWhatItMayNotTake(t *testing.T) {
	f := newFixture(t, Options{})
	f.write("a.txt", "the first")
	m := f.mark()
	f.write("a.txt", "the second")
	f.changes(m)
	for name, budget := range map[string]int64{"under budget": 1 << 30, "young packs": 1} {
		rep, err := Evict(f.opts.CacheDir, budget)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Objects != 0 || rep.Packs != 0 || rep.After != rep.Before {
			t.Errorf("%s: eviction report %+v, want nothing done", name, rep)
		}
	}
}

// Commands that keep rewriting files just under the size cap grow the
// content cache by what they write; scans evict past the budget, so the
// cache stays within the budget and what the workspace holds.
func TestCacheGrowthIsBounded(t *testing.T) {
	noGrace(t)
	const files, size, budget = 4, 60 << 10, 256 << 10
	f := newFixture(t, Options{MaxFileSize: 64 << 10, CacheBytes: budget})
	for cmd := range 12 {
		m := f.mark()
		for i := range files {
			f.write(fmt.Sprintf("big%d.bin", i), rand.Text()+string(randomBytes(t, size-26)))
		}
		f.changes(m)
		total, _ := cacheSize(f.opts.CacheDir)
		if limit := int64(budget + budget/4 + 2*files*size); total > limit {
			t.Fatalf("after command %d the cache holds %d bytes, want at most %d", cmd+1, total, limit)
		}
	}
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// A pack without an index (a scan under way, or one a stopped process
// left) is left alone until it is old.
func TestEvictTakesOnlyOldOrphans(t *testing.T) {
	noGrace(t)
	dir := t.TempDir()
	o := newObjects(dir)
	data := []byte("in a scan under way")
	if err := o.put(sha256.Sum256(data), data); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		at   time.Time
		want int
	}{{time.Now(), 0}, {time.Now().Add(orphanAge + time.Hour), 1}} {
		rep, err := evict(dir, 1, c.at)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Packs != c.want {
			t.Errorf("at %s: %d packs removed, want %d", c.at, rep.Packs, c.want)
		}
	}
	_ = o.close()
}

// A pack that is mostly live stays while a budget is to be met; with no
// budget at all (gc), its dead object goes all the same.
func TestEvictRewritesAMostlyLivePackOnlyForGC(t *testing.T) {
	noGrace(t)
	f := newFixture(t, Options{})
	f.trustStamps()
	f.write("a.txt", "the first")
	for _, name := range []string{"b.txt", "c.txt", "d.txt"} {
		f.write(name, "stays as it is: "+name)
	}
	m := f.mark()
	f.write("a.txt", "the second")
	f.changes(m)
	for _, c := range []struct {
		budget  int64
		objects int
	}{{1, 0}, {0, 1}} {
		rep, err := Evict(f.opts.CacheDir, c.budget)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Objects != c.objects {
			t.Errorf("budget %d: %d objects removed, want %d", c.budget, rep.Objects, c.objects)
		}
	}
}
