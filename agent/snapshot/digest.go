package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

const digestPrefix = "sha256:"

// Digest names content the way state.FileImage.Blob does: "sha256:" and
// the lowercase hex of its SHA-256.
func Digest(data []byte) string {
	return formatDigest(sha256.Sum256(data))
}

func formatDigest(sum [sha256.Size]byte) string {
	return digestPrefix + hex.EncodeToString(sum[:])
}

// parseDigest is formatDigest's inverse; ok is false for anything that is
// not a lowercase sha256 digest.
func parseDigest(d string) (sum [sha256.Size]byte, ok bool) {
	h, found := strings.CutPrefix(d, digestPrefix)
	if !found || len(h) != 2*sha256.Size || strings.ToLower(h) != h {
		return sum, false
	}
	if _, err := hex.Decode(sum[:], []byte(h)); err != nil {
		return sum, false
	}
	return sum, true
}
