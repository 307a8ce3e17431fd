package boltstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
	"retrace/storage"
)

// Recovered says what Recover kept, and what it could not.
type Recovered struct {
	Sessions int // sessions copied (whole or in part)
	Versions int // versions copied
	Blobs    int // file contents copied
	Lost     []Loss
	// Memories counts the memory log's entries copied: every one up to
	// the first that could not be read or does not follow the ones
	// before it, which MemoryLost says, with those after it.
	Memories   int
	MemoryLost string
}

// Loss is what one session lost.
type Loss struct {
	Session string
	Lost    []int // version numbers, as they were, that could not be kept
	Reason  string
	// Renumbered is true when kept versions moved down, so that they
	// stay 1..N after a loss (closing the gaps gc left too): the report
	// says so, as their numbers changed.
	Renumbered bool
	Whole      bool // nothing of the session could be kept
	// Blobs are the file contents the session's kept versions refer to
	// that could not be read. The versions are kept; their file images
	// now say the content was lost (state.FileImage.Untracked), so a
	// restore tells the path cannot be brought back.
	Blobs []BlobLoss
}

// BlobLoss is one file content Recover could not copy.
type BlobLoss struct {
	Digest string
	Reason string
}

// Recover copies every session and version of a damaged database that
// still reads back intact into a new file at dst, which must not exist.
// The damaged file is only read.
//
// A version is kept when its record passes its checksum and decodes, and
// its parent was kept: a state is the replay of its whole path, so a
// version whose ancestor is lost cannot be shown truthfully and is lost
// with it. A session that lost nothing keeps its version numbers, and the
// gaps gc left; in one that lost versions, the kept ones are numbered
// 1..N again in their old order. A session whose head was lost continues
// from its newest kept version. Snapshots are not copied: the new file
// makes its own from the kept events.
//
// The file contents kept versions refer to are copied, each once, after
// it is read back against its digest. One that cannot be read is no
// reason to lose the versions: they are kept, with the content marked
// lost in their file images, and the report names it (Loss.Blobs).
//
// Damage to bbolt's own page structure (a truncated file, a broken page)
// cannot be read around: Recover then fails with the error Open gives.
func Recover(ctx context.Context, src, dst string) (Recovered, error) {
	if _, err := os.Stat(dst); err == nil {
		return Recovered{}, fmt.Errorf("recover into %s: the file exists; give a new path", dst)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Recovered{}, fmt.Errorf("recover into %s: %w", dst, err)
	}
	from, err := Open(src, Options{})
	if err != nil {
		return Recovered{}, err
	}
	defer from.Close()
	var sessions []salvaged
	var memories memorySalvage
	contents := &blobSalvage{store: from, kept: map[string]sealedBlob{}, lost: map[string]string{}}
	err = from.view(ctx, func(tx *bolt.Tx) error {
		memories = salvageMemory(tx.Bucket(memoryBucket))
		b, err := from.sessionsOf(tx)
		if err != nil {
			return err
		}
		if contents.in, err = from.contentsOf(tx); err != nil {
			return err
		}
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if v == nil {
				sessions = append(sessions, salvage(b.Bucket(k), string(k), contents))
			}
		}
		return nil
	})
	if err != nil {
		return Recovered{}, err
	}
	return write(ctx, dst, sessions, contents.kept, memories)
}

// memorySalvage is the memory log as Recover could read it.
type memorySalvage struct {
	records [][]byte // sealed entries 1..n, as they were
	folded  state.Memories
	lost    string
}

// salvageMemory keeps the log's entries up to the first that cannot be
// read or does not follow the ones before it: a later edit or removal
// may name a memory that entry added, and a restore names versions.
func salvageMemory(b *bolt.Bucket) memorySalvage {
	var ms memorySalvage
	if b == nil {
		return ms // a file of a schema before the memory log
	}
	lost := func(want int, err error) {
		ms.lost = fmt.Sprintf("memory log v%d: %v; it and what follows it (%d of %d entries) are not copied", want, err, b.Stats().KeyN-want+1, b.Stats().KeyN)
	}
	var log []state.MemoryEvent
	c := b.Cursor()
	for k, raw := c.First(); k != nil; k, raw = c.Next() {
		v, ok := keyVersion(k)
		want := len(ms.records) + 1
		var ev state.MemoryEvent
		var err error
		switch {
		case !ok || raw == nil:
			err = fmt.Errorf("a stray key %x", k)
		case v != want:
			err = errors.New("it is missing")
		default:
			ev, err = decodeMemory(raw, v)
		}
		if err != nil {
			lost(want, err)
			break
		}
		ms.records = append(ms.records, bytes.Clone(raw))
		log = append(log, ev)
	}
	// Folded whole, the log names the first entry that does not follow;
	// what comes before it is folded again.
	var err error
	if ms.folded, err = state.FoldMemories(log); err != nil {
		var me *state.MemoryError
		if !errors.As(err, &me) {
			me = &state.MemoryError{Version: 1}
		}
		lost(me.Version, err)
		ms.records, log = ms.records[:me.Version-1], log[:me.Version-1]
		ms.folded, _ = state.FoldMemories(log)
	}
	return ms
}

// salvaged is one session as Recover could read it.
type salvaged struct {
	id      string
	info    infoRecord
	records []keptRecord // re-encoded, ascending
	loss    Loss
}

// keptRecord is one version Recover keeps, under its new number.
type keptRecord struct {
	version int
	record  []byte
}

// blobSalvage reads the damaged file's contents for Recover, each once
// however many versions and sessions refer to it.
type blobSalvage struct {
	store *Store
	in    contents
	kept  map[string]sealedBlob // digest -> its records, read back intact
	lost  map[string]string     // digest -> why it could not be read
}

// keep reads the content d names, and returns why it cannot be kept, or
// "" when it is.
func (bs *blobSalvage) keep(d string) string {
	if _, ok := bs.kept[d]; ok {
		return ""
	}
	if why, ok := bs.lost[d]; ok {
		return why
	}
	raw := []byte(nil)
	if k, ok := blobKey(d); ok {
		raw = bs.in.blobs.Get(k)
	}
	why := "it is missing"
	if raw != nil {
		data, err := bs.store.readBlob(bs.in, d, raw)
		if err == nil {
			// Checked: a whole record is copied as is, a chunked
			// content's chunks sealed again.
			bs.kept[d] = sealedBlob{head: bytes.Clone(raw)}
			if _, chunked, _ := chunkedSize(raw); chunked {
				bs.kept[d] = sealContent(data)
			}
			return ""
		}
		why = err.Error()
		if ce := (*storage.CorruptError)(nil); errors.As(err, &ce) {
			why = ce.Reason // the file and the digest are said already
		}
	}
	bs.lost[d] = why
	return why
}

// rewrite keeps the contents ev's files refer to and marks those that
// cannot be kept as lost in ev's file images, so no kept version refers
// to content the new file does not hold. It returns the event and the
// contents lost.
func (bs *blobSalvage) rewrite(ev state.Event) (state.Event, []BlobLoss) {
	var lost []BlobLoss
	for _, d := range ev.BlobDigests() {
		if why := bs.keep(d); why != "" {
			lost = append(lost, BlobLoss{Digest: d, Reason: why})
		}
	}
	if len(lost) == 0 {
		return ev, nil
	}
	files := slices.Clone(ev.Files)
	for i := range files {
		for _, img := range []*state.FileImage{&files[i].Before, &files[i].After} {
			if img.Blob != "" && bs.lost[img.Blob] != "" {
				img.Untracked = "its content " + img.Blob + " was lost when the database was recovered"
				img.Blob = ""
			}
		}
	}
	ev.Files = files
	return ev, lost
}

func salvage(b *bolt.Bucket, id string, contents *blobSalvage) salvaged {
	s := salvaged{id: id, loss: Loss{Session: id}}
	info, infoErr := decodeInfo(b.Get(infoKey))
	err := infoErr
	if err != nil {
		s.loss.Reason = "its session record: " + err.Error()
		info = infoRecord{Title: "(recovered session)"}
	}
	s.info = info
	vb := b.Bucket(versionsBucket)
	if vb == nil {
		s.loss.Whole, s.loss.Reason = true, "its versions are missing"
		return s
	}
	type checkpoint struct {
		version, parent int
		phase           state.Phase
		ev              state.Event
	}
	var kept []checkpoint
	isKept := map[int]bool{0: true}
	c := vb.Cursor()
	for k, raw := c.First(); k != nil; k, raw = c.Next() {
		v, ok := keyVersion(k)
		if !ok {
			continue
		}
		h, ev, err := decodeCheckpoint(raw)
		// A parent that is not older is damage of the record itself; only
		// an older parent can have been lost.
		if err == nil && h.parent >= v {
			err = fmt.Errorf("its parent v%d is not older than it", h.parent)
		}
		if err == nil && !isKept[h.parent] {
			err = fmt.Errorf("its parent v%d was lost", h.parent)
		}
		if err == nil {
			// It must encode again under any number: find out now.
			_, err = encodeCheckpoint(h.parent, h.phase, ev)
		}
		if err != nil {
			s.loss.Lost = append(s.loss.Lost, v)
			if s.loss.Reason == "" {
				s.loss.Reason = fmt.Sprintf("v%d: %v", v, err)
			}
			continue
		}
		var lost []BlobLoss
		ev, lost = contents.rewrite(ev)
		s.loss.addBlobs(lost)
		kept = append(kept, checkpoint{v, h.parent, h.phase, ev})
		isKept[v] = true
	}

	// Numbers stay as they were unless a version was lost (or the record
	// that lists gc's gaps was): then the gaps close, and the report says
	// the numbers moved.
	renumber := map[int]int{0: 0} // old version -> new
	phases := map[int]state.Phase{0: state.Idle}
	keepNumbers := len(s.loss.Lost) == 0 && infoErr == nil
	if !keepNumbers {
		s.info.Removed = nil
	}
	for i, k := range kept {
		v := k.version
		if !keepNumbers {
			v = i + 1
		}
		renumber[k.version], phases[v] = v, k.phase
		s.loss.Renumbered = s.loss.Renumbered || v != k.version
		rec, _ := encodeCheckpoint(renumber[k.parent], k.phase, k.ev) // encoded above
		s.records = append(s.records, keptRecord{v, rec})
	}
	last := 0
	if len(s.records) > 0 {
		last = s.records[len(s.records)-1].version
	}
	head, ok := renumber[info.Head]
	if !ok || infoErr != nil { // the head was lost, or never known
		head = last
	}
	s.info.Head, s.info.Phase = head, phases[head]
	if !keepNumbers {
		s.info.Versions = last
	}
	return s
}

// addBlobs adds the contents lost, each once, and makes the first one
// the reason when the session lost nothing else.
func (l *Loss) addBlobs(lost []BlobLoss) {
	for _, b := range lost {
		if slices.ContainsFunc(l.Blobs, func(o BlobLoss) bool { return o.Digest == b.Digest }) {
			continue
		}
		l.Blobs = append(l.Blobs, b)
		if l.Reason == "" {
			l.Reason = fmt.Sprintf("file content %s could not be read (%s); the versions that refer to it say so", b.Digest, b.Reason)
		}
	}
}

func write(ctx context.Context, dst string, sessions []salvaged, blobs map[string]sealedBlob, memories memorySalvage) (Recovered, error) {
	to, err := Open(dst, Options{})
	if err != nil {
		return Recovered{}, err
	}
	defer to.Close()
	var r Recovered
	err = to.update(ctx, func(tx *bolt.Tx) error {
		into, err := to.sessionsOf(tx)
		if err != nil {
			return err
		}
		if err := putBlobs(to, tx, blobs); err != nil {
			return err
		}
		r.Blobs = len(blobs)
		mb, err := to.memoryOf(tx)
		if err != nil {
			return err
		}
		for i, rec := range memories.records {
			if err := mb.Put(versionKey(i+1), rec); err != nil {
				return err
			}
		}
		if n := len(memories.records); n > 0 {
			if err := keepMemorySnapshot(tx, memories.folded, memories.records[n-1]); err != nil {
				return err
			}
		}
		r.Memories, r.MemoryLost = len(memories.records), memories.lost
		for _, s := range sessions {
			if len(s.loss.Lost) > 0 || s.loss.Whole || s.loss.Reason != "" || len(s.loss.Blobs) > 0 || s.loss.Renumbered {
				r.Lost = append(r.Lost, s.loss)
			}
			if s.loss.Whole {
				continue
			}
			b, err := into.CreateBucket([]byte(s.id))
			if err != nil {
				return err
			}
			vb, err := b.CreateBucket(versionsBucket)
			if err != nil {
				return err
			}
			vb.FillPercent = 1.0
			for _, k := range s.records {
				if err := vb.Put(versionKey(k.version), k.record); err != nil {
					return err
				}
			}
			if err := to.keepSnapshots(b, s.id, s.info); err != nil {
				return err
			}
			if err := putInfo(b, s.info); err != nil {
				return err
			}
			r.Sessions++
			r.Versions += len(s.records)
		}
		return nil
	})
	if err != nil {
		return Recovered{}, fmt.Errorf("recover into %s: %w", dst, err)
	}
	// Every kept head must replay: the copy is checked as a whole before
	// anyone relies on it.
	for _, s := range sessions {
		if s.loss.Whole {
			continue
		}
		if _, err := to.Head(ctx, s.id); err != nil {
			return r, fmt.Errorf("recover into %s: session %s does not replay: %w", dst, s.id, err)
		}
	}
	return r, Verify(ctx, dst)
}

// putBlobs puts the contents Recover read back intact into the new file.
func putBlobs(to *Store, tx *bolt.Tx, blobs map[string]sealedBlob) error {
	bucket, err := to.blobsOf(tx)
	if err != nil {
		return err
	}
	for d, rec := range blobs {
		k, _ := blobKey(d) // it was read under this digest
		if err := to.putContent(tx, bucket, k, rec); err != nil {
			return fmt.Errorf("file content %s: %w", d, err)
		}
	}
	return nil
}
