// Package inerttest is what every package's inertness tests share: one
// hostile input per class of text a terminal acts on, and one checker.
//
// Both are written by hand from the terminal's side (ECMA-48's C0 and C1
// controls and control strings, xterm's OSC 0/2/8/52, Unicode's bidi
// controls), not from transcript.Inert, so a test that uses them does not
// take the code under test's word for what is dangerous. The stand-ins a
// class expects are the ones Inert's documentation promises: caret
// notation for C0 and DEL, <U+XXXX> for C1 and bidi controls, U+FFFD for
// bytes that are not UTF-8.
//
// Only tests import this package.
package inerttest

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Class is one kind of hostile text.
type Class struct {
	Name string
	// Text is the hostile input, between visible words so a path that
	// drops it silently is seen to.
	Text string
	// Shown are what must be on the screen in its place, in order, after
	// styling is stripped.
	Shown []string
	// Raw says Text holds bytes that are not UTF-8; data formats that
	// must be UTF-8 (JSON) carry U+FFFD in their place.
	Raw bool
}

// Classes are the hostile inputs, one per class.
var Classes = []Class{
	{Name: "C0 NUL", Text: "nul\x00byte", Shown: []string{"nul^@byte"}},
	{Name: "C0 BEL", Text: "ring\x07bell", Shown: []string{"ring^Gbell"}},
	{Name: "C0 BS", Text: "erase\x08\x08\x08done", Shown: []string{"erase^H^H^Hdone"}},
	{Name: "C0 CR alone", Text: "fake\roverwrite", Shown: []string{"fake^Moverwrite"}},
	{Name: "C0 VT and FF", Text: "vertical\x0btab\x0cfeed", Shown: []string{"vertical^Ktab^Lfeed"}},
	{Name: "C0 SO and SI", Text: "shift\x0eout\x0fin", Shown: []string{"shift^Nout^Oin"}},
	{Name: "lone ESC", Text: "esc\x1bape", Shown: []string{"esc^[ape"}},
	{Name: "ESC at the end", Text: "trailing\x1b", Shown: []string{"trailing^["}},
	{Name: "ESC c reset", Text: "full\x1bcreset", Shown: []string{"full^[creset"}},
	{Name: "DEL", Text: "del\x7fete", Shown: []string{"del^?ete"}},
	{Name: "C1 as UTF-8", Text: "nel\u0085csi\u009b2Jst\u009cend",
		Shown: []string{"nel<U+0085>csi<U+009B>2Jst<U+009C>end"}},
	{Name: "C1 as raw bytes", Text: "osc\x9d0;pwned\x07dcs\x90q\x9cend",
		Shown: []string{"osc\uFFFD0;pwned^Gdcs\uFFFDq\uFFFDend"}, Raw: true},
	{Name: "8-bit CSI 0x9B", Text: "red\x9b31mtext\x9b2J", Shown: []string{"red\uFFFD31mtext\uFFFD2J"}, Raw: true},
	{Name: "8-bit CSI as UTF-8", Text: "red\u009b31mtext", Shown: []string{"red<U+009B>31mtext"}},
	{Name: "bidi embeddings and overrides", Text: "a\u202ab\u202bc\u202cd\u202de\u202ef",
		Shown: []string{"a<U+202A>b<U+202B>c<U+202C>d<U+202D>e<U+202E>f"}},
	{Name: "bidi isolates", Text: "i\u2066j\u2067k\u2068l\u2069m",
		Shown: []string{"i<U+2066>j<U+2067>k<U+2068>l<U+2069>m"}},
	{Name: "bidi marks", Text: "l\u200er\u200fa\u061cm", Shown: []string{"l<U+200E>r<U+200F>a<U+061C>m"}},
	{Name: "OSC title, BEL", Text: "\x1b]0;pwned\x07title", Shown: []string{"^[]0;pwned^Gtitle"}},
	{Name: "OSC title, ST", Text: "\x1b]2;pwned\x1b\\title", Shown: []string{"^[]2;pwned^[", "title"}},
	{Name: "OSC 52 clipboard", Text: "\x1b]52;c;cm0gLXJmIH4=\x07copied", Shown: []string{"^[]52;c;cm0gLXJmIH4=^Gcopied"}},
	{Name: "OSC 8 hyperlink", Text: "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\",
		Shown: []string{"^[]8;;http://evil.example/^[", "click^[]8;;^["}},
	{Name: "CSI cursor moves", Text: "\x1b[2A\x1b[10;5Hmoved\x1b[s", Shown: []string{"^[[2A^[[10;5Hmoved^[[s"}},
	{Name: "CSI clear screen", Text: "\x1b[2J\x1b[3J\x1b[Kcleared", Shown: []string{"^[[2J^[[3J^[[Kcleared"}},
	{Name: "CSI SGR", Text: "\x1b[31;1mred\x1b[0m", Shown: []string{"^[[31;1mred^[[0m"}},
	{Name: "DCS string", Text: "\x1bP1$r0m\x1b\\dcs", Shown: []string{"^[P1$r0m^[", "dcs"}},
	{Name: "APC string", Text: "\x1b_Gf=100;AAAA\x1b\\apc", Shown: []string{"^[_Gf=100;AAAA^[", "apc"}},
	{Name: "PM string", Text: "\x1b^private\x1b\\pm", Shown: []string{"^[^private^[", "pm"}},
	{Name: "SOS string", Text: "\x1bXstring\x1b\\sos", Shown: []string{"^[Xstring^[", "sos"}},
}

// Problems lists each byte or character in out that a terminal would act
// on: C0 controls but those in allow (usually "\n", or "\n\t"), ESC
// always, DEL, C1 controls whether encoded in UTF-8 or sent as raw 8-bit
// bytes (any byte that is not UTF-8 counts: a terminal in 8-bit mode takes
// 0x9B as CSI), and the bidi controls that reorder what is shown.
func Problems(out, allow string) []string {
	var bad []string
	for i := 0; i < len(out); {
		r, size := utf8.DecodeRuneInString(out[i:])
		at := i
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			bad = append(bad, fmt.Sprintf("byte 0x%02X at %d is not UTF-8", out[at], at))
		case r < 0x20 && (r == 0x1b || !contains(allow, r)):
			bad = append(bad, fmt.Sprintf("C0 control 0x%02X at %d", r, at))
		case r == 0x7f:
			bad = append(bad, fmt.Sprintf("DEL at %d", at))
		case r >= 0x80 && r <= 0x9f:
			bad = append(bad, fmt.Sprintf("C1 control U+%04X at %d", r, at))
		case isBidi(r):
			bad = append(bad, fmt.Sprintf("bidi control U+%04X at %d", r, at))
		}
	}
	return bad
}

func contains(allow string, r rune) bool {
	for _, a := range allow {
		if a == r {
			return true
		}
	}
	return false
}

// isBidi is Unicode's list of explicit directional formatting characters
// (UAX #9, section 2): embeddings, overrides, isolates and the marks.
func isBidi(r rune) bool {
	switch r {
	case 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, // LRE RLE PDF LRO RLO
		0x2066, 0x2067, 0x2068, 0x2069, // LRI RLI FSI PDI
		0x200E, 0x200F, 0x061C: // LRM RLM ALM
		return true
	}
	return false
}

// Missing lists what of c's stand-ins out lacks. The first must follow
// tag directly: a test puts a tag before the hostile text in the field it
// makes hostile, so that field is seen to show it. room is how many cells
// the path shows of a one-line field it clips (0: all of it); then only
// the tag and what fits of the first stand-in before the ellipsis are
// required.
func Missing(out, tag string, c Class, room int) []string {
	first := tag + c.Shown[0]
	if room > 0 {
		if r := []rune(first); len(r) > room-1 {
			first = string(r[:room-1])
		}
		return missing(out, first)
	}
	var miss []string
	for i, s := range c.Shown {
		if i == 0 {
			s = first
		}
		miss = append(miss, missing(out, s)...)
	}
	return miss
}

func missing(out, s string) []string {
	if strings.Contains(out, s) {
		return nil
	}
	return []string{s}
}

// JSONEscape writes s inside a JSON string as a model would: control
// characters, quotes and backslashes escaped as \u00XX, the rest (C1,
// bidi controls) as it is, which is what a summary of JSON arguments
// must still make inert.
func JSONEscape(s string) string {
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case r < 0x20 || r == '"' || r == '\\':
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&15])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
