package markdown

import (
	"image/color"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Styles are the styles the renderer applies (the UI's themes package builds
// them). Only their SGR attributes are used; see the package documentation.
type Styles struct {
	// Text is the base style of paragraphs and list items.
	Text lipgloss.Style
	// Heading styles ATX headings of every level.
	Heading lipgloss.Style
	// Bold is layered over the surrounding style for **strong** text.
	Bold lipgloss.Style
	// Italic is layered over the surrounding style for *emphasised* text.
	Italic lipgloss.Style
	// Code is layered over the surrounding style for `code spans`.
	Code lipgloss.Style
	// CodeBlock styles the lines of fenced and indented code blocks. When it
	// has a background, lines are padded so the block reads as a rectangle.
	CodeBlock lipgloss.Style
	// Quote styles blockquote text and the quote bar.
	Quote lipgloss.Style
	// Bullet styles list markers.
	Bullet lipgloss.Style
	// Link styles link destinations and autolinks.
	Link lipgloss.Style
	// Rule styles thematic breaks and the language label above code blocks,
	// which should both read as dimmed.
	Rule lipgloss.Style
}

// base is the style a run of inline text sits on; inline attributes are
// layered over it.
type base uint8

const (
	baseText base = iota
	baseHeading
	baseQuote
	numBases
)

// Inline attribute bits carried by spans.
const (
	stBold uint8 = 1 << iota
	stItalic
	stCode
	stLink
	numInline = 1 << iota
)

// sgrReset ends every styled run. Each line closes its own styles so that
// the caller can cut the output into lines without styles leaking across.
const sgrReset = ansi.ResetStyle

// palette holds the SGR prefixes of one Render call. Extracting them once and
// concatenating strings is much cheaper than calling lipgloss.Style.Render per
// run, which re-does layout work we do not want anyway.
type palette struct {
	text, heading, bold, italic, code, codeBlock, quote, bullet, link, rule string

	codeBackground bool

	// Container prefixes, built once per Render rather than per block.
	quoteBar, quotePrefix string
	bulletPrefix          [len(bullets)]string

	combo [numBases][numInline]string
	ready [numBases][numInline]bool
}

func newPalette(s *Styles) *palette {
	p := &palette{
		text:           sgrOf(s.Text),
		heading:        sgrOf(s.Heading),
		bold:           sgrOf(s.Bold),
		italic:         sgrOf(s.Italic),
		code:           sgrOf(s.Code),
		codeBlock:      sgrOf(s.CodeBlock),
		quote:          sgrOf(s.Quote),
		bullet:         sgrOf(s.Bullet),
		link:           sgrOf(s.Link),
		rule:           sgrOf(s.Rule),
		codeBackground: isColor(s.CodeBlock.GetBackground()),
	}
	p.quoteBar = styled(p.quote, "│")
	p.quotePrefix = p.quoteBar + " "
	for i, b := range bullets {
		p.bulletPrefix[i] = styled(p.bullet, b) + " "
	}
	return p
}

// sgrFor returns the SGR prefix for inline attributes st over base b. The
// sequences are concatenated rather than merged: later ones override earlier
// colours, which is exactly the layering we want (code colours win over bold).
func (p *palette) sgrFor(b base, st uint8) string {
	if p.ready[b][st] {
		return p.combo[b][st]
	}
	var s string
	switch b {
	case baseHeading:
		s = p.heading
	case baseQuote:
		s = p.quote
	default:
		s = p.text
	}
	if st&stBold != 0 {
		s += p.bold
	}
	if st&stItalic != 0 {
		s += p.italic
	}
	if st&stCode != 0 {
		s += p.code
	}
	if st&stLink != 0 {
		s += p.link
	}
	p.combo[b][st], p.ready[b][st] = s, true
	return s
}

func isColor(c color.Color) bool {
	if c == nil {
		return false
	}
	_, none := c.(lipgloss.NoColor)
	return !none
}

// sgrOf builds the SGR sequence lipgloss would open a run of st with, in the
// same attribute order as lipgloss.Style.Render, so a caller comparing with
// lipgloss output sees the same bytes. It returns "" for a style without
// attributes, so unstyled text costs nothing.
func sgrOf(st lipgloss.Style) string {
	var a ansi.Style
	if st.GetBold() {
		a = a.Bold()
	}
	if st.GetItalic() {
		a = a.Italic(true)
	}
	if st.GetUnderline() {
		a = a.Underline(true)
	}
	if st.GetReverse() {
		a = a.Reverse(true)
	}
	if st.GetBlink() {
		a = a.Blink(true)
	}
	if st.GetFaint() {
		a = a.Faint()
	}
	if c := st.GetForeground(); isColor(c) {
		a = a.ForegroundColor(c)
	}
	if c := st.GetBackground(); isColor(c) {
		a = a.BackgroundColor(c)
	}
	if c := st.GetUnderlineColor(); isColor(c) {
		a = a.UnderlineColor(c)
	}
	if st.GetUnderline() {
		a = a.UnderlineStyle(st.GetUnderlineStyle())
	}
	if st.GetStrikethrough() {
		a = a.Strikethrough(true)
	}
	if len(a) == 0 {
		return ""
	}
	return a.String()
}
