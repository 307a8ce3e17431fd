package markdown_test

import (
	"fmt"

	"retrace/tui/markdown"
)

func ExampleRender() {
	reply := "## Plan\n\n1. Read `go.mod`\n2. Run the **tests**\n\n```sh\ngo test ./...\n```"
	// The themes package builds real Styles; zero Styles render plain text.
	fmt.Println(markdown.Render(reply, 30, markdown.Styles{}))
	// Output:
	// Plan
	//
	// 1. Read go.mod
	// 2. Run the tests
	//
	//   sh
	//   go test ./...
}
