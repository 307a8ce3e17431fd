package markdown

import (
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// plain renders src and returns the text without styles, trailing spaces
// trimmed from each line (code background padding is not under test here).
func plain(src string, width int) string {
	lines := strings.Split(ansi.Strip(Render(src, width, Styles{})), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

func TestRenderPlain(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		width int
		want  string
	}{
		// Paragraphs.
		{"empty", "", 40, ""},
		{"blank", " \n\n  \n", 40, ""},
		{"soft breaks join", "one\ntwo\n  three", 40, "one two three"},
		{"wrap", "aaa bbb ccc ddd", 10, "aaa bbb\nccc ddd"},
		{"long word hard wrapped", "abcdefghijklmnop", 10, "abcdefghij\nklmnop"},
		{"hard break spaces", "a  \nb", 40, "a\nb"},
		{"hard break backslash", "a\\\nb", 40, "a\nb"},
		{"two paragraphs", "a\n\n\nb", 40, "a\n\nb"},
		{"crlf", "a\r\nb\r\n\r\nc", 40, "a b\n\nc"},
		{"control replaced", "a\x1bb\x00c", 40, "a\uFFFDb\uFFFDc"},
		{"html stays", "<br> and <div>x</div>", 40, "<br> and <div>x</div>"},

		// Headings.
		{"heading", "# Title\ntext", 40, "Title\n\ntext"},
		{"heading levels", "## Two\n###### Six", 40, "Two\n\nSix"},
		{"heading closing hashes", "### Deep ###", 40, "Deep"},
		{"heading keeps inner hash", "# C# tips", 40, "C# tips"},
		{"not a heading without space", "#hashtag", 40, "#hashtag"},
		{"seven hashes is text", "####### seven", 40, "####### seven"},
		{"heading inline", "# The `Render` *func*", 40, "The Render func"},

		// Code.
		{"fence", "```go\nx := 1\n```\nafter", 40, "  go\n  x := 1\n\nafter"},
		{"fence no info", "```\na\n\nb\n```", 40, "  a\n\n  b"},
		{"tilde fence", "~~~~\na\n~~~\n~~~~", 40, "  a\n  ~~~"},
		{"long fence needs long close", "````\n```\n````", 40, "  ```"},
		{"fence info kept whole", "```go title=main.go\nx\n```", 40, "  go title=main.go\n  x"},
		{"inline backtick fence is text", "```x``` y", 40, "x y"},
		{"code hard wrapped not word wrapped", "```\naaaa bbbb cccc\n```", 12, "  aaaa bbbb\n  cccc"},
		{"code keeps indentation", "```\nif x {\n\ty()\n}\n```", 40, "  if x {\n      y()\n  }"},
		{"indented code", "    code\n      more\n\ntext", 40, "  code\n    more\n\ntext"},
		{"indented line continues paragraph", "para\n    not code", 40, "para not code"},
		{"unterminated fence", "text\n\n```py\nprint(1)\n\nx = 2\n\n", 40, "text\n\n  py\n  print(1)\n\n  x = 2"},
		{"just opened fence", "text\n\n```go", 40, "text\n\n  go"},

		// Lists.
		{"bullets", "- a\n* b\n+ c", 40, "• a\n• b\n• c"},
		{"hanging indent", "- aaa bbb ccc ddd", 10, "• aaa bbb\n  ccc ddd"},
		{"nested", "- a\n  - b\n    - c", 40, "• a\n  ◦ b\n    • c"},
		{"nested four spaces", "- a\n    - b", 40, "• a\n  ◦ b"},
		{"ordered", "1. a\n2. b", 40, "1. a\n2. b"},
		{"ordered paren start", "3) x\n4) y", 40, "3) x\n4) y"},
		{"ordered renumbered", "1. a\n1. b\n1. c", 40, "1. a\n2. b\n3. c"},
		{"ordered aligned", "9. a\n9. b", 40, " 9. a\n10. b"},
		{"ordered wrap", "1. aaa bbb ccc", 10, "1. aaa bbb\n   ccc"},
		{"loose list", "- a\n\n- b", 40, "• a\n\n• b"},
		{"lazy continuation", "- a\nb", 40, "• a b"},
		{"item paragraphs", "- a\n\n  b\n- c", 40, "• a\n\n  b\n\n• c"},
		{"two space sublist under ordered", "1. a\n  - b\n2. c", 40, "1. a\n   ◦ b\n2. c"},
		{"item with fence", "1. run:\n   ```sh\n   ls\n   ```\n2. done", 40, "1. run:\n     sh\n     ls\n2. done"},
		{"list after paragraph", "Steps:\n1. a\n2. b", 40, "Steps:\n\n1. a\n2. b"},
		{"empty item", "-\n- b", 40, "•\n• b"},
		{"not a list", "-x and 1.5 and 2)no", 40, "-x and 1.5 and 2)no"},
		{"bullet then ordered", "- a\n1. b", 40, "• a\n\n1. b"},

		// Quotes.
		{"quote", "> a\n> b", 40, "│ a b"},
		{"quote lazy", "> a\nb", 40, "│ a b"},
		{"quote paragraphs", "> a\n>\n> b", 40, "│ a\n│\n│ b"},
		{"quote wrap", "> aaa bbb ccc ddd", 12, "│ aaa bbb\n│ ccc ddd"},
		{"nested quote", "> a\n>> b", 40, "│ a\n│\n│ │ b"},
		{"quote with list", "> - a\n> - b", 40, "│ • a\n│ • b"},
		{"quote with code", "> ```\n> x\n> ```", 40, "│   x"},
		{"quote ends at blank", "> a\n\nb", 40, "│ a\n\nb"},

		// Thematic breaks.
		{"rule dashes", "a\n\n---\n\nb", 10, "a\n\n──────────\n\nb"},
		{"rule stars", "***", 12, "────────────"},
		{"rule underscores spaced", "_ _ _", 10, "──────────"},
		{"rule spaced dashes", "- - -", 10, "──────────"},

		// Inline.
		{"code span", "use `x := 1` now", 40, "use x := 1 now"},
		{"code span double", "``a`b``", 40, "a`b"},
		{"code span stripped", "`` `x` ``", 40, "`x`"},
		{"code span unclosed", "a `b c", 40, "a `b c"},
		{"code span hides emphasis", "`*a*`", 40, "*a*"},
		{"emphasis", "**b** __c__ *i* _j_ ***bi***", 40, "b c i j bi"},
		{"intraword underscore", "snake_case_name and 2*3*4", 40, "snake_case_name and 234"},
		{"intraword star", "foo**bar**baz", 40, "foobarbaz"},
		{"unclosed emphasis", "**bold and *it", 40, "**bold and *it"},
		{"lone stars", "a * b ** c", 40, "a * b ** c"},
		{"leftover delimiter", "***a**", 40, "*a"},
		{"link", "see [the docs](https://x.io/a) now", 40, "see the docs (https://x.io/a) now"},
		{"link same as url", "[https://x.io](https://x.io)", 40, "https://x.io"},
		{"link empty text", "[](https://x.io)", 40, "https://x.io"},
		{"link parens in url", "[w](https://w.org/A_(b))", 40, "w (https://w.org/A_(b))"},
		{"link angle url", "[a](<b c>)", 40, "a (b c)"},
		{"link emphasis inside", "[**b**](u)", 40, "b (u)"},
		{"image", "![alt](img.png)", 40, "alt (img.png)"},
		{"incomplete link", "[text](http", 40, "[text](http"},
		{"reference link is text", "[a][b]", 40, "[a][b]"},
		{"autolink", "<https://x.io>", 40, "https://x.io"},
		{"escapes", `\*not\* \_x\_ \# \` + "`" + ` \[y\] \\ \q`, 40, "*not* _x_ # ` [y] \\ \\q"},
		{"escaped heading", `\# no`, 40, "# no"},

		// Tables pass through.
		{"table", "| a | b |\n|---|:-:|\n| 1 | `2` |", 40, "| a | b |\n|---|:-:|\n| 1 | 2 |"},
		{"table hard wrapped", "| aaaa | bbbb |\n|---|---|", 10, "| aaaa | b\nbbb |\n|---|---|"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := plain(tt.src, tt.width)
			if got != tt.want {
				t.Errorf("Render(%q, %d):\n got %q\nwant %q", tt.src, tt.width, got, tt.want)
			}
		})
	}
}

// mixedDoc exercises every construct plus wide characters, for the width
// properties.
var mixedDoc = benchReply + "\n\n" +
	"# 标题 with emoji 🚀🚀 and a very_long_identifier_that_cannot_break_anywhere_at_all\n\n" +
	"中文段落没有空格所以必须在字符之间断行，而且每个字符占两个单元格。Mixed 中文 and English.\n\n" +
	"- 👍🏽 thumbs, 👨‍👩‍👧 family, 🇺🇸 flag, e\u0301 combining, ☺\uFE0F text-emoji\n" +
	"  1. deep *ordered* item with `inline code that is long` and more words\n" +
	"     > a quote inside a list inside a list, wrapping over several lines\n" +
	"     > ```\n" +
	"     > code in a quote in a list: 一二三四五六七八九十一二三四五六七八九十\n" +
	"     > ```\n\n" +
	"> > > deeply quoted **bold** text that goes on and on and on\n\n" +
	"| 列 | column |\n|---|---|\n| 值 | value with `code` |\n\n" +
	"```\n" + strings.Repeat("x", 200) + "\n\t\ttabbed 🚀 line\n```\n\n" +
	"```unterminated\nstreaming code 中文"

func TestEveryLineWithinWidth(t *testing.T) {
	for _, st := range []Styles{{}, benchStyles()} {
		for w := 1; w <= 120; w++ {
			out := Render(mixedDoc, w, st)
			if err := checkOutput(mixedDoc, out, w); err != nil {
				t.Fatalf("width %d: %v", w, err)
			}
		}
	}
}

func TestTinyAndInvalidWidths(t *testing.T) {
	for _, w := range []int{-100, -1, 0, 1, 2, 3, 5, 9, 10} {
		out := Render(mixedDoc, w, benchStyles())
		if err := checkOutput(mixedDoc, out, max(w, 1)); err != nil {
			t.Fatalf("width %d: %v", w, err)
		}
	}
	if got := plain("ab", 0); got != "a\nb" {
		t.Errorf("width 0 renders at width 1: got %q", got)
	}
}

func TestWideCharacters(t *testing.T) {
	tests := []struct {
		name  string
		src   string
		width int
		want  string
	}{
		{"cjk broken between characters", "中文字符测试", 10, "中文字符测\n试"},
		{"cjk never split", "中文字符测试", 11, "中文字符测\n试"},
		{"emoji", "👍👍👍👍👍👍", 10, "👍👍👍👍👍\n👍"},
		{"zwj family is one cluster", "👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧", 4, "👨‍👩‍👧👨‍👩‍👧\n👨‍👩‍👧"},
		{"mixed words", "hello 世界 again", 10, "hello 世界\nagain"},
		{"width one", "a中b", 1, "a\n?\nb"},
		{"cjk code", "```\n一二三四五六\n```", 10, "  一二三四\n  五六"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := plain(tt.src, tt.width)
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
			for _, l := range strings.Split(got, "\n") {
				if ansi.StringWidth(l) > tt.width {
					t.Errorf("line %q is %d cells, over %d", l, ansi.StringWidth(l), tt.width)
				}
			}
		})
	}
}

func TestUnterminatedFenceStreaming(t *testing.T) {
	// Every prefix of a streaming reply renders, within width, and once the
	// fence is open the partial code is shown as code.
	reply := "Here:\n\n```go\nfunc main() {\n\tprintln(\"hi\")\n}\n```\n\nDone."
	st := benchStyles()
	code := sgrPrefix(st.CodeBlock)
	for n := range len(reply) + 1 {
		src := reply[:n]
		out := Render(src, 30, st)
		if err := checkOutput(src, out, 30); err != nil {
			t.Fatalf("prefix %q: %v", src, err)
		}
		if strings.Contains(src, "```go\nf") && !strings.Contains(out, code+"f") {
			t.Fatalf("prefix %q: partial code not styled as code:\n%q", src, out)
		}
	}
}

// sgrPrefix is what lipgloss opens a run of st with.
func sgrPrefix(st lipgloss.Style) string {
	pre, _, _ := strings.Cut(st.Render("x"), "x")
	return pre
}

func TestStylesApplied(t *testing.T) {
	st := benchStyles()
	tests := []struct {
		name  string
		src   string
		style lipgloss.Style
		text  string // must follow the style's SGR directly
	}{
		{"text", "plain words", st.Text, "plain"},
		{"heading", "# Head", st.Heading, "Head"},
		{"bold", "a **strong** b", st.Bold, "strong"},
		{"italic", "a *soft* b", st.Italic, "soft"},
		{"code span", "a `span` b", st.Code, "span"},
		{"code block", "```\nblock\n```", st.CodeBlock, "block"},
		{"code label", "```lang\nx\n```", st.Rule, "lang"},
		{"quote", "> quoted", st.Quote, "quoted"},
		{"quote bar", "> quoted", st.Quote, "│"},
		{"bullet", "- item", st.Bullet, "•"},
		{"number", "1. item", st.Bullet, "1."},
		{"link", "[a](https://x.io)", st.Link, "https://x.io"},
		{"autolink", "<https://x.io>", st.Link, "https://x.io"},
		{"rule", "---", st.Rule, "───"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := Render(tt.src, 40, st)
			want := sgrPrefix(tt.style)
			if want == "" {
				t.Fatal("test style has no SGR")
			}
			if !strings.Contains(out, want) {
				t.Fatalf("%q lacks the style's SGR %q", out, want)
			}
			// The style is layered: its SGR may be followed by others (bold
			// over text), but the text must appear after it on the line.
			i := strings.Index(out, want)
			if !strings.Contains(out[i:], tt.text) {
				t.Fatalf("%q: %q does not follow %q", out, tt.text, want)
			}
		})
	}
}

func TestCodeBlockPaddedOnBackground(t *testing.T) {
	out := Render("```\nab\nabcd\n```", 40, benchStyles())
	for _, l := range strings.Split(ansi.Strip(out), "\n") {
		if ansi.StringWidth(l) != 6 {
			t.Errorf("line %q: want padded to 6 cells (2 indent + 4)", l)
		}
	}
	if out := Render("```\nab\nabcd\n```", 40, Styles{}); strings.HasSuffix(strings.Split(out, "\n")[0], " ") {
		t.Errorf("no background, no padding: %q", out)
	}
}

func TestUnstyledOutputHasNoEscapes(t *testing.T) {
	if out := Render(mixedDoc, 60, Styles{}); strings.ContainsRune(out, '\x1b') {
		t.Fatalf("empty Styles must produce plain text, got escapes")
	}
}

func TestSgrMatchesLipgloss(t *testing.T) {
	st := benchStyles()
	for _, s := range []lipgloss.Style{st.Text, st.Heading, st.Code, st.CodeBlock, st.Quote, st.Link,
		lipgloss.NewStyle().Faint(true).Strikethrough(true).Reverse(true).Blink(true),
		lipgloss.NewStyle().UnderlineStyle(lipgloss.UnderlineCurly).UnderlineColor(lipgloss.Color("1")),
		lipgloss.NewStyle(),
	} {
		if got, want := sgrOf(s), sgrPrefix(s); got != want {
			t.Errorf("sgrOf = %q, lipgloss opens with %q", got, want)
		}
	}
}
