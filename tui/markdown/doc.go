// Package markdown renders the markdown of assistant replies as styled
// terminal text for the conversation pane.
//
// # Basics
//
// [Render] takes markdown source, a width in cells and a [Styles] value built
// by the themes package, and returns lines joined by "\n", none wider than the
// width as measured by ansi.StringWidth. It is a small hand-written block
// parser (paragraphs, ATX headings, fenced and indented code, bullet and
// ordered lists, blockquotes, thematic breaks, GFM tables passed through)
// followed by an inline parser (code spans, emphasis, links, autolinks,
// backslash escapes) and an ANSI-aware word wrapper. There is no markdown
// library underneath: the UI re-renders a streaming reply every frame, so the
// renderer is built to do one pass and allocate little.
//
// # Caveats
//
//   - Anything the parser does not understand is shown as plain text; nothing
//     but markdown syntax characters is dropped. Ordered lists are renumbered
//     from their first number, as every markdown viewer does, so the numbers
//     shown are not always the ones written.
//   - An unterminated code fence (a reply still streaming) renders the rest
//     of the source as code, so a half-received block looks like code at once.
//   - Code lines are never word-wrapped, only hard-wrapped at the width, so no
//     character is lost; long lines continue on the next line.
//   - Only the SGR attributes of the styles are used (colours, bold, italic,
//     underline, faint, reverse, blink, strikethrough). Padding, margins,
//     borders, widths and transforms of a [charm.land/lipgloss/v2.Style] are
//     ignored: the renderer owns the layout. The output contains nothing but
//     the source's text, spaces, the decorations (bullets, the quote bar,
//     rules) and those SGR sequences; every line ends with its styles reset,
//     so the caller may slice the output by lines.
//   - Tabs are expanded to 4-column stops and control characters the caller
//     failed to remove are shown as U+FFFD, never passed to the terminal.
//   - The language of a fenced block is shown above it in the Rule style, so
//     themes should make Rule a dim, subtle colour.
//   - Nesting indentation (list markers, quote bars, the code indent) is cut
//     where it would leave the content fewer than 10 cells (half the width
//     below 20 cells), so deep nesting and tiny widths stay within bounds
//     instead of squeezing text to a column. At width 1 a double-width
//     character cannot fit and is shown as "?"; nothing else is ever cut.
//   - Inline markup still streaming in ("**bold" before its closing "**")
//     shows its syntax until it is closed, as in any CommonMark renderer.
//   - Render is a pure function of its arguments and safe for concurrent use;
//     it does no caching, so callers cache by width and content version.
package markdown
