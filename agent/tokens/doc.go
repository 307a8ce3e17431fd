// Package tokens counts how many tokens a conversation takes, so the agent can
// summarise old turns before the conversation outgrows the model's context
// window.
//
// # Basics
//
// NewCounter picks a tokenizer for a model name: o200k_base for OpenAI's
// gpt-4o, gpt-4.1, gpt-4.5, gpt-5, gpt-oss and o-series models, cl100k_base
// for everything else. For OpenAI's models text counts are exact. Other models'
// tokenizers are not carried here, and cl100k_base stands in for them: a
// close estimate for Llama 3 and Qwen, whose vocabularies grew out of
// cl100k_base's, a low one for models with small vocabularies such as the
// 32K of Llama 2 or Mistral 7B. If summaries come too late for such a model,
// configure a smaller window for it.
//
//	c := tokens.NewCounter("gpt-4o-mini")
//	used := c.Messages(history)
//	if used > tokens.Window("gpt-4o-mini", 0)*8/10 {
//		// summarise
//	}
//
// Window gives a model's context window: the configured value when there is
// one, otherwise a default from a table of well-known models.
//
// # Counting messages
//
// Message follows the rule of OpenAI's cookbook ("How to count tokens with
// tiktoken"), which matches what the API bills for gpt-3.5-turbo, gpt-4 and
// gpt-4o: every message costs 3 tokens of framing, plus its role and content;
// a name costs its own tokens plus 1; every request costs 3 more to prime the
// reply. The cookbook has no rule for tool calls inside a message, so a tool
// call counts like a message of its own: 3 tokens, plus its name and its
// arguments. Call IDs are not counted: models see them, if at all, as a few
// opaque tokens that differ between servers.
//
// # Speed and the network
//
// Counting is github.com/pkoukk/tiktoken-go's. Its tables come compiled
// into the binary (github.com/pkoukk/tiktoken-go-loader) and are never
// downloaded, so counting works offline. Each table is parsed once per
// process, the first time a Counter that needs it counts; that takes a
// tenth of a second or two. A count of a few hundred characters then takes
// about a tenth of a millisecond, which is why the agent counts each
// message once and keeps the figure.
//
// # Caveats
//
// If a table cannot be loaded, a Counter does not fail: it estimates one
// token per four bytes, rounded up, and says so through Exact and Err.
//
// Text is handed to tiktoken in chunks of at most 512 bytes, cut at
// whitespace where there is any: tiktoken's merge costs the square of a
// piece's length, and one long run without a break (a minified file,
// base64) would otherwise take minutes. A cut inside such a run can add a
// token per chunk.
//
// Tool definitions sent with a request are not counted here.
package tokens
