package tokens

import "strings"

// DefaultWindow is the context window assumed for a model this package does
// not know. 32K is what most current open models offer at least, and
// guessing low only makes the agent summarise sooner, while guessing high
// makes requests fail.
const DefaultWindow = 32768

// windowRule gives the context window of the models whose normalised name
// contains pattern, or, with prefix set, starts with it.
type windowRule struct {
	pattern string
	window  int
	prefix  bool
}

// windowRules is searched in order and the first match wins, so a more
// specific name comes before any name it contains ("gpt4o" before "gpt4").
// Patterns are in normalised form: lower case, no separators. Where a family
// has sizes with different windows, the rule takes the smallest common one;
// the configured window overrides it.
var windowRules = []windowRule{
	// OpenAI.
	{pattern: "gpt4.1", window: 1047576},
	{pattern: "gpt4.5", window: 128000},
	{pattern: "gpt4o", window: 128000}, // also chatgpt-4o-latest
	{pattern: "gpt4turbo", window: 128000},
	{pattern: "gpt41106", window: 128000}, // gpt-4-1106-preview
	{pattern: "gpt40125", window: 128000}, // gpt-4-0125-preview
	{pattern: "gpt432k", window: 32768},
	{pattern: "gpt4", window: 8192},
	{pattern: "gpt5chat", window: 128000},
	// gpt-5's 400K is input and output together; OpenAI caps input at
	// 272K, below the 320K at which an agent summarising at 80% would act.
	// Configure 340000 to stay under the cap.
	{pattern: "gpt5", window: 400000},
	{pattern: "gpt3.5turboinstruct", window: 4096},
	{pattern: "gpt3.5turbo", window: 16385},
	{pattern: "gptoss", window: 131072},
	{pattern: "o1mini", window: 128000, prefix: true},
	{pattern: "o1preview", window: 128000, prefix: true},
	{pattern: "o1", window: 200000, prefix: true},
	{pattern: "o3", window: 200000, prefix: true},
	{pattern: "o4", window: 200000, prefix: true},
	// Anthropic and Google, when reached through an OpenAI-compatible proxy.
	{pattern: "claude", window: 200000},
	{pattern: "gemini1.0", window: 32768},
	{pattern: "gemini", window: 1048576},
	// Meta. Llama 4 serves far more in some places; 128K is what every
	// host offers.
	{pattern: "llama4", window: 131072},
	{pattern: "llama3.1", window: 131072},
	{pattern: "llama3.2", window: 131072},
	{pattern: "llama3.3", window: 131072},
	{pattern: "llama3", window: 8192},
	{pattern: "llama2", window: 4096},
	{pattern: "codellama", window: 16384},
	// Alibaba. Qwen 2.5 and 3 reach 128K only with YaRN scaling switched on.
	{pattern: "qwen2.5", window: 32768},
	{pattern: "qwen3", window: 32768},
	{pattern: "qwq", window: 32768},
	// DeepSeek. Its API serves 64K; the first coder models had 16K.
	{pattern: "deepseekcoderv2", window: 131072},
	{pattern: "deepseekcoder", window: 16384},
	{pattern: "deepseek", window: 65536},
	// Mistral.
	{pattern: "mistralnemo", window: 131072},
	{pattern: "mistrallarge", window: 131072},
	{pattern: "mistral", window: 32768},
	{pattern: "mixtral", window: 32768},
	{pattern: "codestral", window: 32768},
	// Google's open models. Gemma 3 1B has 32K, the larger ones 128K.
	{pattern: "gemma3", window: 32768},
	{pattern: "gemma", window: 8192},
	// Microsoft. Phi-3 also comes in 128K variants; configure those.
	{pattern: "phi3.5", window: 131072},
	{pattern: "phi4", window: 16384},
	{pattern: "phi3", window: 4096},
}

// Window returns the context window for a model: configured if it is
// positive, because the person knows what their server was started with;
// otherwise the window of a well-known model, matched by name ignoring case,
// a provider prefix and separators ("Meta-Llama-3.1-8B", "llama3.1:8b");
// otherwise DefaultWindow.
func Window(model string, configured int) int {
	if configured > 0 {
		return configured
	}
	n := normalize(model)
	for _, r := range windowRules {
		if r.matches(n) {
			return r.window
		}
	}
	return DefaultWindow
}

// matches reports whether the normalised model name n falls under r.
func (r windowRule) matches(n string) bool {
	if r.prefix {
		return strings.HasPrefix(n, r.pattern)
	}
	return strings.Contains(n, r.pattern)
}
