// Package themes holds retrace's colours and every Lip Gloss style the TUI
// uses. Nothing outside this package names a colour.
//
// # Basics
//
// A [Palette] gives a colour to each semantic role: text, muted and subtle
// text, primary and accent, success/warning/error/info, the conversation
// roles (user, assistant, tool, reasoning), one colour per agent phase, and
// the two diff colours. [Palette.Styles] turns a palette into one [Styles]
// struct grouped by pane (Pane, Chat, Phase, Plan, Tools, Notes, Input,
// Status, Dialog, Timeline, Sessions, Help, Markdown). The TUI builds Styles
// once per theme change and passes the groups to its panes.
//
// Six palettes are built in, listed by [Names]: "dark" (the [Default]),
// "light", "high-contrast", "catppuccin" (Mocha), "tokyo-night" and "none".
// [Resolve] picks one from a configured name and the environment: a
// non-empty NO_COLOR selects "none" whatever was asked
// (https://no-color.org).
//
// # Design rules
//
//   - A background colour is set only where it carries meaning: the dialog
//     box and its buttons, badges and selected rows. The App style sets a background only if
//     the palette has one (dark and light leave it nil, the terminal's own).
//   - Badges (phase, demo, read-only, the timeline banner) are reverse video
//     of the role colour, so they read as dark text on the colour on a dark
//     terminal, and stay visible as plain reverse video in "none".
//   - Borders, bold, italic, underline and reverse survive in "none": its
//     styles emit no colour escape codes, but the UI keeps its shape.
//
// # Caveats
//
//   - Lip Gloss v2 Style.Render always emits the palette's exact (true
//     colour) codes; downsampling to what the terminal supports happens when
//     the frame is written (Bubble Tea does this). Tests can therefore
//     compare rendered strings directly.
//   - A style's escape codes end with a reset, so a background set by an
//     outer style does not show through inner styled segments. App alone
//     therefore paints a line only up to its first styled segment. The
//     TUI carries App's colours over the whole frame instead, setting them
//     again after every reset, so the other styles need not repeat the
//     Background, and a palette without one gets none.
//   - Selected rows (Tools.Selected, Sessions.Selected,
//     Timeline.NodeSelected) use the Surface background; in a palette
//     without colour they use reverse video instead. Render the row's plain
//     text with them, not already styled segments.
package themes
