package snapshot

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// repack goes through the packs eviction may touch, oldest first, while
// the cache is over budget or holds too many packs. A pack without an
// index was left by a stopped process and goes. A pack that is mostly
// dead (unreferenced), or small while there are too many, has its live
// objects copied, still compressed, to a new pack, and goes. A pack that
// is mostly live stays, unless there is no budget at all (gc): rewriting
// it would give little back, at the price of its whole size.
func (c *cacheSurvey) repack(refs map[[sha256.Size]byte]bool, budget int64, now time.Time, rep *EvictReport) error {
	out := newObjects(c.dir)
	out.known[""] = true // a writer only: it dedups what it copies, nothing else
	defer out.close()
	var gone []cachePack
	for _, p := range c.list {
		if c.total <= budget && len(c.list)-len(gone) <= maxPacks {
			break
		}
		age := now.Sub(p.mtime)
		if age < evictGrace || p.entries == nil && age < orphanAge {
			continue
		}
		live, liveBytes := liveEntries(p, refs)
		small := len(c.list)-len(gone) > maxPacks && p.size < packLimit/8
		// With no budget (gc), any dead object is worth a rewrite.
		worth := p.size-liveBytes >= p.size/2 || budget <= 0 && len(live) < len(p.entries)
		if p.entries != nil && !worth && !small {
			continue
		}
		if err := c.copyLive(out, p, live); err != nil {
			return err
		}
		rep.Objects += len(p.entries) - len(live)
		c.total -= p.size - liveBytes
		gone = append(gone, p)
	}
	// The new packs are indexed before the old ones go, so that a reader
	// finds every live object in one or the other.
	if err := out.seal(); err != nil {
		return err
	}
	for _, p := range gone {
		base := filepath.Join(c.packs, p.name)
		_ = os.Remove(base + idxExt)
		if err := os.Remove(base + packExt); err != nil && !isMissing(err) {
			return fmt.Errorf("evict %s: %w", base+packExt, err)
		}
		rep.Packs++
	}
	return nil
}

// liveEntries is what of p a workspace refers to, and the bytes of its
// records.
func liveEntries(p cachePack, refs map[[sha256.Size]byte]bool) ([]idxEntry, int64) {
	var live []idxEntry
	var n int64
	var head [2 * binary.MaxVarintLen64]byte
	for _, e := range p.entries {
		if refs[e.sum] {
			live = append(live, e)
			h := binary.AppendUvarint(binary.AppendUvarint(head[:0], uint64(e.size)), uint64(e.len))
			n += sha256.Size + int64(len(h)) + e.len
		}
	}
	return live, n
}

// copyLive appends p's live objects to out's pack, as they are.
func (c *cacheSurvey) copyLive(out *objects, p cachePack, live []idxEntry) error {
	if len(live) == 0 {
		return nil
	}
	f, err := os.Open(filepath.Join(c.packs, p.name+packExt))
	if err != nil {
		return nil // gone already: nothing to copy
	}
	defer f.Close()
	for _, e := range live {
		if e.len > maxObject {
			continue
		}
		packed := make([]byte, e.len)
		if _, err := f.ReadAt(packed, e.off); err != nil {
			continue // damaged: a reader would not have trusted it either
		}
		if err := out.putPacked(e.sum, e.size, packed); err != nil {
			return err
		}
	}
	return nil
}

// dropLegacy removes the objects of the older layout that no workspace
// refers to, and the fan-out directories left empty. Those referred to
// stay where they are, and are read there.
func (c *cacheSurvey) dropLegacy(refs map[[sha256.Size]byte]bool, rep *EvictReport) {
	dirs := map[string]bool{}
	for _, file := range c.legacy {
		dir := filepath.Dir(file)
		h := filepath.Base(dir) + strings.TrimSuffix(filepath.Base(file), ".zst")
		var sum [sha256.Size]byte
		if b, err := hex.DecodeString(h); err == nil && len(b) == sha256.Size {
			copy(sum[:], b)
			if refs[sum] {
				continue
			}
		}
		if os.Remove(file) == nil {
			rep.Objects++
		}
		dirs[dir] = true
	}
	for dir := range dirs {
		_ = os.Remove(dir) // only when empty
	}
}
