package sandbox

import "errors"

// ErrUnknownMode is wrapped by ParseMode's error for a name that is not a
// mode; the message lists the ones that are.
var ErrUnknownMode = errors.New("unknown sandbox mode")

// ErrNotConfined is wrapped by the error of a command that did not run
// because the sandbox could not be set up around it. A command is never
// run with less confinement than Check reported.
var ErrNotConfined = errors.New("the command could not be confined and did not run")
