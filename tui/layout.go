package tui

// wideLayout is the width from which the side panes sit beside the
// conversation; below it they go behind tabs.
const wideLayout = 100

// layout is where everything goes, computed on resize.
type layout struct {
	wide           bool
	mainH          int // rows for the panes (or the tabbed pane)
	convW, sideW   int
	phaseH, planH  int
	toolsH, notesH int
	inputH         int
	noticeH        int // rows of a message too long for the status line
}

// compute lays out a width×height screen with an input inputH rows high
// (0: none) and noticeH rows of a long message; extra rows (the
// timeline's banner) come off the panes.
func computeLayout(width, height, inputH, noticeH, extra int) layout {
	l := layout{wide: width >= wideLayout, inputH: inputH, noticeH: noticeH}
	l.mainH = max(height-1-l.inputH-noticeH-extra, 3) // 1: the status line
	if !l.wide {
		l.convW = width
		return l
	}
	l.sideW = min(max(width*34/100, 34), 56)
	l.convW = width - l.sideW
	l.phaseH = 5
	rest := max(l.mainH-l.phaseH, 9)
	l.planH = max(rest*36/100, 4)
	l.notesH = max(rest*20/100, 3)
	l.toolsH = rest - l.planH - l.notesH
	return l
}

// tabs are the panes of a narrow layout, in order.
var tabs = []string{"Chat", "Plan", "Tools", "Notes"}
