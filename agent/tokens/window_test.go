package tokens_test

import (
	"testing"

	"retrace/agent/tokens"
)

func TestWindow(t *testing.T) {
	tests := []struct {
		model      string
		configured int
		want       int
	}{
		// The configured value wins, for known and unknown models alike.
		{"gpt-4o", 50000, 50000},
		{"my-finetune", 12345, 12345},
		// Zero or negative means not configured.
		{"gpt-4o", 0, 128000},
		{"gpt-4o", -1, 128000},
		{"my-finetune", 0, tokens.DefaultWindow},
		{"", 0, 32768},

		{"gpt-4o-mini", 0, 128000},
		{"chatgpt-4o-latest", 0, 128000},
		{"gpt-4.1", 0, 1047576},
		{"gpt-4.1-mini-2025-04-14", 0, 1047576},
		{"gpt-5", 0, 400000},
		{"gpt-5-mini", 0, 400000},
		{"gpt-5-chat-latest", 0, 128000},
		{"gpt-4-turbo", 0, 128000},
		{"gpt-4-turbo-2024-04-09", 0, 128000},
		{"gpt-4-1106-preview", 0, 128000},
		{"gpt-4-32k", 0, 32768},
		{"gpt-4", 0, 8192},
		{"gpt-4-0613", 0, 8192},
		{"gpt-3.5-turbo", 0, 16385},
		{"gpt-3.5-turbo-instruct", 0, 4096},
		{"o1", 0, 200000},
		{"o1-mini", 0, 128000},
		{"o3-mini", 0, 200000},
		{"o4-mini", 0, 200000},
		{"openai/o3", 0, 200000},

		{"llama3.1", 0, 131072},
		{"llama3.1:8b", 0, 131072},
		{"llama-3.1-70b-versatile", 0, 131072},
		{"meta-llama/Meta-Llama-3.1-8B-Instruct", 0, 131072},
		{"llama3.2:3b", 0, 131072},
		{"llama-3.3-70b", 0, 131072},
		{"llama3", 0, 8192},
		{"llama3:8b", 0, 8192},
		{"Llama-3-8B-Instruct", 0, 8192},
		{"llama2", 0, 4096},
		{"qwen2.5:7b", 0, 32768},
		{"Qwen/Qwen2.5-Coder-32B-Instruct", 0, 32768},
		{"qwen3:30b", 0, 32768},
		{"deepseek-chat", 0, 65536},
		{"deepseek-r1:14b", 0, 65536},
		{"deepseek-coder:6.7b", 0, 16384},
		{"deepseek-coder-v2", 0, 131072},
		{"mistral", 0, 32768},
		{"mistral:7b-instruct", 0, 32768},
		{"mistral-nemo", 0, 131072},
		{"mixtral:8x7b", 0, 32768},
		{"gemma:7b", 0, 8192},
		{"gemma2:9b", 0, 8192},
		{"gemma3:4b", 0, 32768},
		{"phi3", 0, 4096},
		{"phi-3-mini-4k-instruct", 0, 4096},
		{"phi3.5", 0, 131072},
		{"phi4", 0, 16384},

		// Case and provider prefixes do not matter.
		{"GPT-4O", 0, 128000},
		{"openrouter/Meta-Llama/LLAMA-3.1-405B", 0, 131072},
		// Unknown models get the default.
		{"olmo2:7b", 0, 32768},
		{"foo-1", 0, 32768},
	}
	for _, tt := range tests {
		if got := tokens.Window(tt.model, tt.configured); got != tt.want {
			t.Errorf("Window(%q, %d) = %d, want %d", tt.model, tt.configured, got, tt.want)
		}
	}
}
