package transcript

import "fmt"

// Size says a size the way a person would, and the way retrace states
// its caps: "64 KiB", "10 MiB", "1 byte", or plain bytes when neither
// unit divides it. (Ifs rather than a tagless switch, so that mutation
// testing runs each condition.)
func Size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n >= 1<<10 && n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	if n == 1 {
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}
