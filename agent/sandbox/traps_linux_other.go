//go:build linux && !amd64 && !arm64

package sandbox

// auditArch is zero where the filter is not written for the architecture:
// commands there are not watched (see watchable).
const auditArch = 0

var traps []trap
