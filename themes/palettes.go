package themes

import "charm.land/lipgloss/v2"

// hex is lipgloss.Color under a shorter name, for the tables below.
var hex = lipgloss.Color

// registry holds the built-in palettes in the order Names lists them.
var registry = []Palette{dark, light, highContrast, catppuccin, tokyoNight, none}

// dark is the default: calm, muted hues that keep good contrast on black.
var dark = Palette{
	Name: "dark", Dark: true,
	Text: hex("#d7dae0"), Muted: hex("#9da5b4"), Subtle: hex("#5c6370"),
	Primary: hex("#82aaff"), Accent: hex("#89ddff"),
	Background: nil, Surface: hex("#2c313c"),
	Success: hex("#a3d989"), Warning: hex("#f0c674"), Error: hex("#f07178"), Info: hex("#7fc8f8"),
	User: hex("#89ddff"), Assistant: hex("#c3e88d"), Tool: hex("#c792ea"), Reasoning: hex("#7f8794"),
	Idle: hex("#8a919e"), Planning: hex("#c792ea"), Executing: hex("#82aaff"),
	Awaiting: hex("#ffcb6b"), Reflecting: hex("#5fd7c4"), Done: hex("#a3d989"), Failed: hex("#f07178"),
	DiffAdd: hex("#a3d989"), DiffDel: hex("#f07178"),
}

// light is for light terminals: dark text and saturated, darker hues, so
// nothing is light on light.
var light = Palette{
	Name: "light", Dark: false,
	Text: hex("#24292f"), Muted: hex("#57606a"), Subtle: hex("#8c959f"),
	Primary: hex("#0550ae"), Accent: hex("#8250df"),
	Background: nil, Surface: hex("#dde4ee"),
	Success: hex("#1a7f37"), Warning: hex("#9a6700"), Error: hex("#cf222e"), Info: hex("#0969da"),
	User: hex("#0969da"), Assistant: hex("#1a7f37"), Tool: hex("#8250df"), Reasoning: hex("#6e7781"),
	Idle: hex("#6e7781"), Planning: hex("#8250df"), Executing: hex("#0969da"),
	Awaiting: hex("#bc4c00"), Reflecting: hex("#0a7b83"), Done: hex("#1a7f37"), Failed: hex("#cf222e"),
	DiffAdd: hex("#1a7f37"), DiffDel: hex("#cf222e"),
}

// highContrast uses pure, bright colours on black for low vision; its
// Surface is navy so selected rows and dialogs stay high contrast too.
var highContrast = Palette{
	Name: "high-contrast", Dark: true,
	Text: hex("#ffffff"), Muted: hex("#e0e0e0"), Subtle: hex("#b0b0b0"),
	Primary: hex("#00ffff"), Accent: hex("#ffff00"),
	Background: hex("#000000"), Surface: hex("#000080"),
	Success: hex("#00ff00"), Warning: hex("#ffaf00"), Error: hex("#ff5f5f"), Info: hex("#5fafff"),
	User: hex("#00ffff"), Assistant: hex("#00ff00"), Tool: hex("#ff87ff"), Reasoning: hex("#c0c0c0"),
	Idle: hex("#c0c0c0"), Planning: hex("#ff87ff"), Executing: hex("#5fafff"),
	Awaiting: hex("#ffff00"), Reflecting: hex("#00ffff"), Done: hex("#00ff00"), Failed: hex("#ff5f5f"),
	DiffAdd: hex("#00ff00"), DiffDel: hex("#ff5f5f"),
}

// catppuccin is Catppuccin Mocha's published palette
// (https://catppuccin.com/palette).
var catppuccin = Palette{
	Name: "catppuccin", Dark: true,
	Text:    hex("#cdd6f4"), // text
	Muted:   hex("#a6adc8"), // subtext0
	Subtle:  hex("#6c7086"), // overlay0
	Primary: hex("#89b4fa"), // blue
	Accent:  hex("#cba6f7"), // mauve

	Background: hex("#1e1e2e"), // base
	Surface:    hex("#313244"), // surface0

	Success: hex("#a6e3a1"), // green
	Warning: hex("#f9e2af"), // yellow
	Error:   hex("#f38ba8"), // red
	Info:    hex("#89dceb"), // sky

	User:      hex("#74c7ec"), // sapphire
	Assistant: hex("#b4befe"), // lavender
	Tool:      hex("#fab387"), // peach
	Reasoning: hex("#7f849c"), // overlay1

	Idle:       hex("#9399b2"), // overlay2
	Planning:   hex("#cba6f7"), // mauve
	Executing:  hex("#89b4fa"), // blue
	Awaiting:   hex("#f9e2af"), // yellow
	Reflecting: hex("#94e2d5"), // teal
	Done:       hex("#a6e3a1"), // green
	Failed:     hex("#f38ba8"), // red

	DiffAdd: hex("#a6e3a1"), // green
	DiffDel: hex("#f38ba8"), // red
}

// tokyoNight is Tokyo Night's published palette (the "night" style of
// folke/tokyonight.nvim).
var tokyoNight = Palette{
	Name: "tokyo-night", Dark: true,
	Text:    hex("#c0caf5"), // fg
	Muted:   hex("#a9b1d6"), // fg_dark
	Subtle:  hex("#565f89"), // comment
	Primary: hex("#7aa2f7"), // blue
	Accent:  hex("#7dcfff"), // cyan

	Background: hex("#1a1b26"), // bg
	Surface:    hex("#292e42"), // bg_highlight

	Success: hex("#9ece6a"), // green
	Warning: hex("#e0af68"), // yellow
	Error:   hex("#f7768e"), // red
	Info:    hex("#2ac3de"), // blue1

	User:      hex("#7dcfff"), // cyan
	Assistant: hex("#bb9af7"), // magenta
	Tool:      hex("#ff9e64"), // orange
	Reasoning: hex("#737aa2"), // dark5

	Idle:       hex("#737aa2"), // dark5
	Planning:   hex("#bb9af7"), // magenta
	Executing:  hex("#7aa2f7"), // blue
	Awaiting:   hex("#e0af68"), // yellow
	Reflecting: hex("#73daca"), // green1
	Done:       hex("#9ece6a"), // green
	Failed:     hex("#f7768e"), // red

	DiffAdd: hex("#9ece6a"), // green
	DiffDel: hex("#f7768e"), // red
}

// nc is the absence of colour: styles built with it emit no colour codes.
var nc = lipgloss.NoColor{}

// none has no colour at all, for NO_COLOR. Its styles keep bold, italic,
// faint, underline, reverse and borders so the UI stays readable.
var none = Palette{
	Name: "none", Dark: true,
	Text: nc, Muted: nc, Subtle: nc,
	Primary: nc, Accent: nc,
	Background: nc, Surface: nc,
	Success: nc, Warning: nc, Error: nc, Info: nc,
	User: nc, Assistant: nc, Tool: nc, Reasoning: nc,
	Idle: nc, Planning: nc, Executing: nc, Awaiting: nc, Reflecting: nc, Done: nc, Failed: nc,
	DiffAdd: nc, DiffDel: nc,
}
