package transcript

import "unicode/utf8"

// Head is s cut to at most n bytes, at the start of a character: the
// part of a long text (a pasted log, a model's argument) that is looked
// at or kept, never ending in half a character.
func Head(s string, n int) string {
	if len(s) <= n {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Shorten is Head marked with … when it cut anything.
func Shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Head(s, n) + "…"
}
