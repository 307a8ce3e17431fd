package snapshot

import (
	"testing"

	"retrace/state"
)

func TestDigest(t *testing.T) {
	for data, want := range map[string]string{
		"":    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		"abc": "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
	} {
		got := Digest([]byte(data))
		if got != want || !state.ValidDigest(got) {
			t.Errorf("Digest(%q) = %s, want %s", data, got, want)
		}
		if sum, ok := parseDigest(got); !ok || formatDigest(sum) != got {
			t.Errorf("parseDigest(%s) does not give it back", got)
		}
	}
	for _, bad := range []string{"", "sha256:", "sha256:ABC", "md5:" + Digest(nil)[7:], Digest(nil)[:70], "sha256:E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855"} {
		if _, ok := parseDigest(bad); ok {
			t.Errorf("parseDigest(%q) accepted it", bad)
		}
	}
}
