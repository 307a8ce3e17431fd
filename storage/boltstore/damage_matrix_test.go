package boltstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/state/statetest"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// buildGoodStore writes the store the damage matrix breaks: four sessions
// (a plain chat holding the marker, a scripted agent run, a session with
// forks, and one with messages longer than a page), about 256 KiB. It
// returns the sessions' ids, the chat first.
func buildGoodStore(t testing.TB, path string) []string {
	t.Helper()
	ctx := context.Background()
	clock := statetest.Epoch
	st, err := boltstore.Open(path, boltstore.Options{Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	create := func(title string) *storage.Cursor {
		info, err := st.Create(ctx, storage.NewSession{Title: title, Model: "test-model", CreatedAt: clock})
		if err != nil {
			t.Fatal(err)
		}
		return storage.NewCursor(st, state.New(info.ID))
	}
	commit := func(cur *storage.Cursor, ev state.Event) {
		t.Helper()
		clock = clock.Add(time.Second)
		ev.At = clock
		if _, err := cur.Commit(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	chat := func(cur *storage.Cursor, n int, size int) {
		for i := range n {
			ev := chatEvent(cur.State(), i)
			ev.Messages[0].Content += " " + strings.Repeat("lorem ipsum ", size/12)
			commit(cur, ev)
		}
	}
	var ids []string

	cur := create("chat")
	for i := range 80 {
		ev := chatEvent(cur.State(), i)
		if i == 17 {
			ev.Messages[0].Content = marker
		}
		commit(cur, ev)
	}
	ids = append(ids, cur.State().SessionID)

	cur = create("scripted")
	rng := rand.New(rand.NewPCG(7, 7))
	for range 150 {
		commit(cur, scripted(rng, cur.State()))
	}
	ids = append(ids, cur.State().SessionID)

	cur = create("forks")
	chat(cur, 40, 100)
	for _, back := range []int{10, 25, 3} {
		id := cur.State().SessionID
		if err := st.SetHead(ctx, id, back); err != nil {
			t.Fatal(err)
		}
		s, err := st.At(ctx, id, back)
		if err != nil {
			t.Fatal(err)
		}
		cur = storage.NewCursor(st, s)
		chat(cur, 15, 100)
	}
	ids = append(ids, cur.State().SessionID)

	cur = create("long messages")
	chat(cur, 8, 6000)
	ids = append(ids, cur.State().SessionID)

	// Long enough to keep a snapshot (snapshot.go), which Recent reads.
	cur = create("snapshots")
	chat(cur, 300, 40)
	ids = append(ids, cur.State().SessionID)

	// A content kept in chunks, each of several pages: every read of it
	// walks its chunks' pages first (guardChunks).
	cur = create("chunked content")
	big, img := chunkedContent()
	evs := boltstore.FileChangeEvents(cur.State().Phase, "call_big", state.FileChange{Path: "big.txt", Before: state.FileImage{Absent: true}, After: img})
	evs[len(evs)-1].Blobs = []state.Blob{big}
	for _, ev := range evs {
		commit(cur, ev)
	}
	ids = append(ids, cur.State().SessionID)

	// A memory log of more than one page: memories kept, edited, removed.
	for _, ev := range memoryEvents(60) {
		if _, err := st.AppendMemory(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	return ids
}

// chunkedContent is the good store's content past 1 MiB: words drawn at
// random, which compress to about a third, so each chunk is a record of
// many pages.
func chunkedContent() (state.Blob, state.FileImage) {
	rng := rand.New(rand.NewPCG(3, 3))
	words := strings.Fields("retrace keeps every version of a session and the files its tools changed in chunks")
	var b strings.Builder
	for b.Len() < boltstore.ChunkSize+100<<10 {
		b.WriteString(words[rng.IntN(len(words))])
		b.WriteByte(" \n"[rng.IntN(2)])
	}
	data := []byte(b.String())
	blob := state.Blob{Digest: storage.Digest(data), Data: data}
	return blob, state.FileImage{Blob: blob.Digest, Size: int64(len(data)), Mode: 0o644}
}

// memoryEvents is a memory log of n events: mostly memories kept, every
// fourth an edit of the one before, every seventh a removal.
func memoryEvents(n int) []state.MemoryEvent {
	var evs []state.MemoryEvent
	var live []string
	for i := range n {
		id := fmt.Sprintf("mem%05d", i)
		switch {
		case i%7 == 6 && len(live) > 0:
			evs = append(evs, state.MemoryEvent{Kind: state.MemoryRemoved, Memory: state.Memory{ID: live[0]}})
			live = live[1:]
		case i%4 == 3 && len(live) > 0:
			evs = append(evs, state.MemoryEvent{Kind: state.MemoryEdited, Memory: state.Memory{ID: live[len(live)-1], Text: fmt.Sprintf("edited at %d: %s", i, strings.Repeat("the person prefers ", 4))}})
		default:
			project := ""
			if i%2 == 0 {
				project = "/home/user/project"
			}
			evs = append(evs, state.MemoryEvent{Kind: state.MemoryAdded, Memory: state.Memory{ID: id, Project: project, Text: fmt.Sprintf("memory %d: %s", i, strings.Repeat("tests run with go test ./... ", 5))}})
			live = append(live, id)
		}
	}
	return evs
}

// The damage matrix: every way of breaking the good store that the
// reliability requirements list (each 4 KiB truncation point, zero length,
// garbage, either meta page flipped, zeroed or random pages, flipped bytes
// in pages and in a value). Every variant is probed in a separate process,
// so that even a fault the runtime cannot recover from is reported as this
// test failing on that variant, rather than killing the test binary.
//
// Each variant must give no panic and no crash; no empty session list
// without an error (a damaged file passing for a new one); only errors of
// one line that name the file (and, for a bad record, the session and
// version); no result that differs from the good file's without an error;
// and a file unchanged by every read, and by every write once a read found
// it damaged. See damage_variants_test.go for the variants.
func TestDamageMatrix(t *testing.T) {
	dir := t.TempDir()
	goodPath := filepath.Join(dir, "good", "retrace.db")
	ids := buildGoodStore(t, goodPath)
	good, err := os.ReadFile(goodPath)
	if err != nil {
		t.Fatal(err)
	}
	// What each read gives on the good file: the probe's own answers.
	want := map[string]string{}
	for _, op := range probeVariant(goodPath, ids).Ops {
		if op.Err != "" || op.Panic != "" {
			t.Fatalf("the good store: %s: %s%s", op.Op, op.Err, op.Panic)
		}
		if !op.Write {
			want[op.Op] = op.Result
		}
	}
	// probeVariant wrote to the good file: build it again for the variants.
	if err := os.WriteFile(goodPath, good, 0o600); err != nil {
		t.Fatal(err)
	}

	variants := damageVariants(t, good, ids[0])
	work := filepath.Join(dir, "variants")
	byDir := map[string]variant{}
	for i, v := range variants {
		name := fmt.Sprintf("v%03d", i)
		if err := os.MkdirAll(filepath.Join(work, name), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, name, "retrace.db"), v.data, 0o600); err != nil {
			t.Fatal(err)
		}
		byDir[name] = v
	}

	cmd := helperCmd(t, "damage-probe", work, strings.Join(ids, ","))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	var current string
	seen, refused, intact := 0, 0, 0
	for line := range strings.Lines(string(stdout)) {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "begin "); ok {
			current = byDir[name].name
			continue
		}
		js, ok := strings.CutPrefix(line, "report ")
		if !ok {
			t.Fatalf("the probe said %q", line)
		}
		var rep probeReport
		if err := json.Unmarshal([]byte(js), &rep); err != nil {
			t.Fatal(err)
		}
		seen++
		v := byDir[rep.Variant]
		t.Run(v.name, func(t *testing.T) { checkProbe(t, v, rep, want) })
		switch readErrors(rep) {
		case 0:
			intact++
		default:
			refused++
		}
		current = ""
	}
	if err != nil {
		t.Fatalf("the probe process died on variant %q: %v\n%s", current, err, firstLines(stderr.String(), 40))
	}
	if seen != len(variants) {
		t.Fatalf("the probe reported %d of %d variants", seen, len(variants))
	}
	if t.Failed() {
		return
	}
	t.Logf("%d damaged variants of a %d KiB store with %d sessions tried: %d refused with an error naming the file, %d read back exactly as before (the damage was to bytes nothing uses); 0 panics, 0 crashes, 0 silent re-creations, 0 damaged files changed by a read or a refused write",
		len(variants), len(good)>>10, len(ids), refused, intact)
}

// checkProbe holds a variant's report to the rules every damaged file
// follows, and to the variant's own expectations.
func checkProbe(t *testing.T, v variant, rep probeReport, want map[string]string) {
	var readErrs []probeOp
	verified := false
	for _, op := range rep.Ops {
		if op.Panic != "" {
			t.Errorf("%s panicked: %s", op.Op, op.Panic)
			continue
		}
		if op.Err == "" {
			if op.Op == "verify" {
				verified = true
			}
			if op.Empty {
				t.Errorf("%s: an empty session list without an error: the damaged file passed for a new one", op.Op)
			}
			if w, ok := want[op.Op]; ok && !op.Write && op.Result != w {
				t.Errorf("%s returned something other than what the good file holds, without an error", op.Op)
			}
			continue
		}
		if !op.Write && !op.Derived {
			readErrs = append(readErrs, op)
		}
		if strings.Contains(op.Err, "\n") || !strings.Contains(op.Err, rep.Path) {
			t.Errorf("%s: the error must be one line naming %s: %q", op.Op, rep.Path, op.Err)
		}
		if !op.Typed {
			t.Errorf("%s: the error wraps neither storage.ErrCorrupt nor storage.ErrNotDatabase: %q", op.Op, op.Err)
		}
		if op.Session != "" && !strings.Contains(op.Err, "session "+op.Session) {
			t.Errorf("%s: the error does not name session %s: %q", op.Op, op.Session, op.Err)
		}
		if op.Version > 0 && !strings.Contains(op.Err, fmt.Sprintf("version %d", op.Version)) {
			t.Errorf("%s: the error does not name version %d: %q", op.Op, op.Version, op.Err)
		}
	}
	if rep.ReadsEdited {
		t.Error("reading the damaged file changed it")
	}
	if verified && len(readErrs) > 0 {
		t.Errorf("Verify passed, but %s failed: %s", readErrs[0].Op, readErrs[0].Err)
	}
	if len(readErrs) > 0 {
		for _, op := range rep.Ops {
			if op.Write && op.Err == "" && op.Panic == "" && op.Op != "open to write" {
				t.Errorf("%s succeeded on a file the reads found damaged", op.Op)
			}
		}
		if rep.WriteEdited {
			t.Error("a refused write changed the damaged file")
		}
	}
	if v.intact {
		for _, op := range rep.Ops {
			if op.Err != "" {
				t.Errorf("nothing the store uses is damaged, but %s failed: %s", op.Op, op.Err)
			}
		}
	}
	if v.derived {
		derived := false
		for _, op := range rep.Ops {
			switch {
			case op.Op == "verify" && op.Derived && strings.Contains(op.Err, "snapshot"):
				derived = true
			case op.Err != "":
				t.Errorf("only the memory log's snapshot is damaged, but %s failed: %s", op.Op, op.Err)
			}
		}
		if !derived {
			t.Error("verify did not report the damaged memory snapshot")
		}
	}
	if len(v.errorSays) > 0 {
		if len(readErrs) == 0 {
			t.Fatalf("not refused: every read succeeded")
		}
		all := ""
		for _, op := range readErrs {
			all += op.Err + "\n"
		}
		for _, s := range v.errorSays {
			if !strings.Contains(all, s) {
				t.Errorf("no error says %q: %s", s, all)
			}
		}
	}
}

func readErrors(rep probeReport) int {
	n := 0
	for _, op := range rep.Ops {
		if !op.Write && op.Err != "" {
			n++
		}
	}
	return n
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[:min(n, len(lines))], "\n")
}

// A session bucket whose name is no id retrace makes is damage: listing
// and verifying the file say so, rather than that the session it lists
// cannot be found.
func TestMalformedSessionID(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "retrace.db")
	newSessions(t, path, 1)
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.Bucket([]byte("sessions")).CreateBucket([]byte("not an id!"))
		if err != nil {
			return err
		}
		_, err = b.CreateBucket([]byte("v"))
		return err
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	st, err := boltstore.Open(path, boltstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for what, err := range map[string]error{
		"sessions": func() error { _, err := st.Sessions(ctx); return err }(),
		"verify":   boltstore.Verify(ctx, path),
	} {
		if !errors.Is(err, storage.ErrCorrupt) || !strings.Contains(err.Error(), `"not an id!"`) {
			t.Errorf("%s: want a storage.ErrCorrupt naming the malformed id, got %v", what, err)
		}
	}
}
